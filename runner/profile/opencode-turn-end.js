// opencode-turn-end.js — an OpenCode plugin that tells runner when a turn ends.
//
// runner writes it into the task's hook directory and hands it to OpenCode
// as a file:// plugin in OPENCODE_CONFIG_CONTENT (the opencode profile's
// hook; runner/profiles_builtin.go): no config directory of the user's is
// touched, and none is added (OpenCode installs its plugin package into
// every config directory it loads, from the network). Each time a session
// goes idle it appends one JSON line to the task's events file
// ($RUNNER_EVENTS_FILE): {"hook_event_name":"Stop"|"SubagentStop",
// "session_id",...,"last_assistant_message"} — the turn then ends at once
// and the record gets the answer. A child session (a sub-agent's) gives
// SubagentStop, which does not end the turn. Outside runner's panes it does
// nothing.
//
// The answer and the session's parent are taken from the events that stream
// by (message.updated, message.part.updated, session.created/updated), so
// the line is written the moment the session goes idle; only what was not
// seen is asked of OpenCode's API.
import { appendFileSync } from "node:fs";
const EVENTS = process.env.RUNNER_EVENTS_FILE;
async function call(f, v1, v2) {
  try { const r = await f(v1); if (r && r.data !== undefined) return r.data; } catch (e) {}
  try { const r = await f(v2); if (r && r.data !== undefined) return r.data; return r; } catch (e) {}
  return undefined;
}
const parents = new Map(); // session id -> parent session id ("" for none)
const lastAssistant = new Map(); // session id -> its latest assistant message id
const texts = new Map(); // message id -> Map(part id -> text)
export const RunnerTurnEnd = async ({ client }) => ({
  event: async ({ event }) => {
    if (!EVENTS || !event) return;
    const p = event.properties || {};
    switch (event.type) {
      case "session.created":
      case "session.updated": {
        const info = p.info || {};
        if (info.id) parents.set(info.id, info.parentID || "");
        return;
      }
      case "message.updated": {
        const info = p.info || {};
        if (info.role === "assistant" && info.sessionID && info.id) lastAssistant.set(info.sessionID, info.id);
        return;
      }
      case "message.part.updated": {
        const part = p.part || {};
        if (part.type !== "text" || part.synthetic || !part.messageID) return;
        let m = texts.get(part.messageID);
        if (!m) texts.set(part.messageID, (m = new Map()));
        m.set(part.id || String(m.size), part.text || "");
        return;
      }
      case "session.idle":
        break;
      default:
        return;
    }
    const id = p.sessionID;
    let parent = parents.get(id), answer;
    const mid = lastAssistant.get(id);
    if (mid && texts.has(mid)) answer = [...texts.get(mid).values()].join("");
    try {
      if (parent === undefined) {
        const s = await call((a) => client.session.get(a), { path: { id } }, { sessionID: id });
        parent = (s && (s.parentID || (s.info && s.info.parentID))) || "";
      }
      if (answer === undefined) {
        answer = "";
        const msgs = (await call((a) => client.session.messages(a), { path: { id } }, { sessionID: id })) || [];
        for (let i = msgs.length - 1; i >= 0; i--) {
          const m = msgs[i], info = m.info || m;
          if (info.role !== "assistant") continue;
          answer = (m.parts || []).filter((x) => x.type === "text" && !x.synthetic).map((x) => x.text).join("");
          break;
        }
      }
    } catch (e) {}
    if (mid) texts.delete(mid);
    appendFileSync(EVENTS, JSON.stringify({ hook_event_name: parent ? "SubagentStop" : "Stop", session_id: id,
      parent_id: parent || "", last_assistant_message: answer || "" }) + "\n");
  },
});
