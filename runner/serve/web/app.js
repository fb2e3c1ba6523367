// runner serve's page: the tasks, live; a task's screen and its dialog;
// send, cancel, dispatch. No framework, no build step. Every text from a
// task goes in through textContent, never as HTML.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  let csrf = "";
  let tasks = [];
  let selected = "";
  let detailTimer = 0;
  let refreshTimer = 0;
  let pollTimer = 0;
  let lastDigest = "";

  function opID() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return "op-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  }

  async function api(method, path, body) {
    const init = { method, headers: {}, credentials: "same-origin" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    if (method !== "GET") init.headers["X-Runner-CSRF"] = csrf;
    const r = await fetch(path, init);
    let data = null;
    try { data = await r.json(); } catch (e) { data = null; }
    if (r.status === 401) loggedOut();
    return { ok: r.ok, status: r.status, data };
  }

  function loggedOut() {
    const n = $("notice");
    n.textContent = "Not logged in (or the session ended). On the machine runner runs on, run: runner serve --login-link, and open the link it prints.";
    n.hidden = false;
    $("conn").textContent = "logged out";
  }

  function age(t) {
    const s = Math.max(0, (Date.now() - Date.parse(t)) / 1000);
    if (!isFinite(s)) return "";
    if (s < 60) return Math.floor(s) + "s";
    if (s < 3600) return Math.floor(s / 60) + "m";
    if (s < 86400) return Math.floor(s / 3600) + "h";
    return Math.floor(s / 86400) + "d";
  }

  function spend(t) {
    const sp = t.spend || {};
    const tok = (sp.input || 0) + (sp.output || 0) + (sp.cached || 0);
    let out = tok ? (tok >= 1000 ? (tok / 1000).toFixed(1) + "k tok" : tok + " tok") : "";
    if (sp.cost_usd) out += (out ? " " : "") + "$" + sp.cost_usd.toFixed(2);
    return out;
  }

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text || "";
    if (cls) td.className = cls;
    tr.appendChild(td);
  }

  function render() {
    const tb = $("tasks").querySelector("tbody");
    tb.replaceChildren();
    const list = tasks.slice().sort((a, b) => Date.parse(b.created) - Date.parse(a.created));
    for (const t of list) {
      const tr = document.createElement("tr");
      tr.dataset.id = t.id;
      if (t.id === selected) tr.className = "sel";
      cell(tr, t.id);
      cell(tr, t.status, "status s-" + t.status);
      cell(tr, t.agent);
      cell(tr, t.project || (t.dir || "").split("/").pop());
      cell(tr, age(t.created));
      cell(tr, spend(t));
      tr.addEventListener("click", () => open(t.id));
      tb.appendChild(tr);
    }
    $("empty").hidden = list.length > 0;
  }

  async function loadTasks() {
    const r = await api("GET", "/api/v1/tasks");
    if (!r.ok) return;
    tasks = Array.isArray(r.data) ? r.data : (r.data && r.data.tasks) || [];
    render();
  }

  function refreshSoon() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => { loadTasks(); if (selected) loadDetail(); }, 250);
  }

  function open(id) {
    selected = id;
    lastDigest = "";
    $("detail").hidden = false;
    $("d-result").textContent = "";
    render();
    loadDetail();
    $("detail").scrollIntoView({ behavior: "smooth", block: "start" });
  }

  function close() {
    selected = "";
    clearTimeout(detailTimer);
    $("detail").hidden = true;
    render();
  }

  async function loadDetail() {
    clearTimeout(detailTimer);
    const id = selected;
    if (!id) return;
    const r = await api("GET", "/api/v1/tasks/" + encodeURIComponent(id));
    if (id !== selected) return;
    if (r.ok && r.data) showDetail(r.data);
    else if (r.data) result("d-result", r.data.error || "error " + r.status, true);
    // A task's screen updates while it is open and the page is seen.
    detailTimer = setTimeout(loadDetail, document.hidden ? 10000 : 2000);
  }

  function showDetail(t) {
    $("d-id").textContent = t.id;
    const st = $("d-status");
    st.textContent = t.status;
    st.className = "status s-" + t.status;
    $("d-agent").textContent = t.agent || "";
    $("d-project").textContent = t.project || t.dir || "";
    const screen = t.screen || t.result_tail || t.answer || "";
    $("d-screen").textContent = screen;
    const d = t.dialog;
    if (t.status === "needs_input" && d && d.options && d.options.length) {
      $("d-dialog").hidden = false;
      $("d-plainq").hidden = true;
      if (d.digest !== lastDigest) {
        lastDigest = d.digest;
        $("d-question").textContent = d.question || t.question || "";
        const box = $("d-options");
        box.replaceChildren();
        for (const o of d.options) {
          const b = document.createElement("button");
          b.type = "button";
          b.className = "option";
          b.dataset.key = o.key;
          b.textContent = o.key + ". " + (o.label || "");
          b.addEventListener("click", () => answer(t.id, d.digest, o.key));
          box.appendChild(b);
        }
      }
    } else {
      $("d-dialog").hidden = true;
      lastDigest = "";
      const q = $("d-plainq");
      q.hidden = !(t.status === "needs_input" && t.question);
      q.textContent = t.question || "";
    }
  }

  function result(id, text, err) {
    const p = $(id);
    p.textContent = text;
    p.className = "result" + (err ? " err" : "");
  }

  async function answer(id, digest, key) {
    for (const b of $("d-options").querySelectorAll("button")) b.disabled = true;
    const r = await api("POST", "/api/v1/tasks/" + encodeURIComponent(id) + "/answer", { digest, option: key, op: opID() });
    if (r.ok) result("d-result", "answered " + key);
    else if (r.status === 409) result("d-result", "The dialog changed before the answer: nothing was pressed. Look again.", true);
    else result("d-result", (r.data && r.data.error) || "error " + r.status, true);
    lastDigest = "";
    refreshSoon();
  }

  async function submitSend(ev) {
    ev.preventDefault();
    const text = $("send-text").value;
    const r = await api("POST", "/api/v1/tasks/" + encodeURIComponent(selected) + "/send", { text });
    if (r.ok) { $("send-text").value = ""; result("d-result", "sent"); }
    else result("d-result", (r.data && r.data.error) || "error " + r.status, true);
    refreshSoon();
  }

  async function cancelTask() {
    if (!selected || !confirm("Cancel " + selected + "?")) return;
    const r = await api("POST", "/api/v1/tasks/" + encodeURIComponent(selected) + "/cancel", {});
    result("d-result", r.ok ? "cancelled" : (r.data && r.data.error) || "error " + r.status, !r.ok);
    refreshSoon();
  }

  async function submitDispatch(ev) {
    ev.preventDefault();
    const body = { project: $("dp-project").value.trim(), task: $("dp-task").value };
    const agent = $("dp-agent").value.trim();
    if (agent) body.agent = agent;
    const r = await api("POST", "/api/v1/tasks", body);
    if (r.ok) {
      $("dp-task").value = "";
      result("dp-result", "dispatched " + ((r.data && r.data.id) || ""));
      if (r.data && r.data.id) open(r.data.id);
    } else result("dp-result", (r.data && r.data.error) || "error " + r.status, true);
    refreshSoon();
  }

  // follow follows the event stream from now, never its whole history:
  // the tasks were read just before, and are read again once the stream is
  // open (whatever changed between the two is in that read). A reconnect
  // goes on from the last event seen (Last-Event-ID: the stream's first
  // line gives the newest cursor even when no event comes).
  function follow() {
    if (!window.EventSource) { poll(); return; }
    const es = new EventSource("/api/v1/events?after=now");
    es.onopen = () => { $("conn").textContent = "live"; clearInterval(pollTimer); pollTimer = 0; refreshSoon(); };
    es.onmessage = () => refreshSoon();
    es.onerror = () => {
      $("conn").textContent = "reconnecting…";
      // EventSource reconnects by itself (with Last-Event-ID); poll meanwhile.
      poll();
    };
  }

  function poll() {
    if (!pollTimer) pollTimer = setInterval(loadTasks, 5000);
  }

  async function start() {
    $("send-form").addEventListener("submit", submitSend);
    $("cancel-btn").addEventListener("click", cancelTask);
    $("close-btn").addEventListener("click", close);
    $("close-btn2").addEventListener("click", close);
    $("dispatch-form").addEventListener("submit", submitDispatch);
    const s = await api("GET", "/api/v1/session");
    if (!s.ok) return;
    csrf = (s.data && s.data.csrf) || "";
    if (s.data && s.data.scope === "read") document.body.classList.add("read");
    await loadTasks();
    follow();
    setInterval(render, 30000); // ages
  }
  start();
})();
