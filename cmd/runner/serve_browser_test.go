package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/tmuxctl"
)

// chromiumPath is Debian's chromium (or Ubuntu's chromium-browser). A
// machine without it skips the browser test; CI (CI=true, .ci/run
// installs chromium) fails instead.
func chromiumPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not installed (CI: .ci/run installs it)")
	}
	t.Skip("chromium not installed")
	return ""
}

// serveRig is a real runner serve on 127.0.0.1 with the sim on a private
// tmux server, in a throw-away HOME: run runs runner there, link makes a
// login link, proj is a project folder.
type serveRig struct {
	run  func(args ...string) string
	addr string
	proj string
}

func startServeRig(t testing.TB) *serveRig {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	bin := selfAsRunner(t)
	runnerExe := filepath.Join(bin, "runner")
	// Not t.TempDir: the tasks' processes may still write their state
	// while the folder is removed (its check then fails the test).
	work, err := os.MkdirTemp("", "rbs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 20 {
			if os.RemoveAll(work) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	home := filepath.Join(work, "home")
	proj := filepath.Join(work, "proj")
	for _, d := range []string{home, proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sockDir, err := os.MkdirTemp("/tmp", "rbt")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "s")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = tmuxctl.New(sock).KillServer(ctx)
		os.RemoveAll(sockDir)
	})
	env := append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local/state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"RUNNER_TMUX_SOCKET="+sock,
		"TERM=xterm-256color",
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	rig := &serveRig{proj: proj}
	rig.run = func(args ...string) string {
		t.Helper()
		cmd := exec.Command(runnerExe, args...)
		cmd.Env, cmd.Dir = env, work
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("runner %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
		}
		return string(out)
	}

	// A free port on loopback: a browser cannot reach a unix socket.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rig.addr = ln.Addr().String()
	ln.Close()
	logPath := filepath.Join(work, "serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	srv := exec.Command(runnerExe, "serve", "--listen", rig.addr)
	srv.Env, srv.Dir, srv.Stdout, srv.Stderr = env, work, logf, logf
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = srv.Process.Kill()
			<-done
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("serve log:\n%s", b)
		}
	})
	for deadline := clock.Now().Add(2 * time.Minute); ; {
		b, _ := os.ReadFile(logPath)
		if bytes.Contains(b, []byte("listening on")) {
			break
		}
		if clock.Now().After(deadline) {
			t.Fatalf("runner serve did not start:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return rig
}

// link makes a login link for the act scope.
func (r *serveRig) link(t testing.TB) string {
	t.Helper()
	link := strings.TrimSpace(r.run("serve", "--login-link", "--url", "http://"+r.addr))
	if !regexp.MustCompile(`^http://` + regexp.QuoteMeta(r.addr) + `/login\?code=\S+$`).MatchString(link) {
		t.Fatalf("login link: %q", link)
	}
	return link
}

// newBrowser is a headless Chromium for ctx.
func newBrowser(t testing.TB, ctx context.Context) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath(t)), chromedp.WindowSize(1000, 1200))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium's own sandbox refuses root
	}
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(bcancel)
	return bctx
}

// TestServePageInBrowser drives runner serve's page in headless Chromium:
// a real server on 127.0.0.1 with the sim on a private tmux server, the
// page opened through a login link, a task that asks a question shown
// with its question and one button per option, answered by a click, and
// seen to end done. Everything is asserted on the DOM; the deadlines are
// only there to end a stuck run.
func TestServePageInBrowser(t *testing.T) {
	t.Parallel() // alongside the scripts: it waits more than it computes
	chromiumPath(t)
	rig := startServeRig(t)
	run, proj := rig.run, rig.proj
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	link := rig.link(t)
	bctx := newBrowser(t, ctx)
	// Every wait below ends at ctx's deadline, not at one of its own.
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(0))
	}

	// A history before the page opens: three tasks run to their end.
	for i := range 3 {
		run("dispatch", proj, "--agent", "sim", "--ready-timeout", "60s", "--timeout", "5m", fmt.Sprintf("say earlier %d", i))
	}
	history := lastCursor(t, run("events", "--json"))

	// The link logs in and goes on to the page: the task list, loaded
	// (the three done), and the event stream open, from now: none of the
	// history replayed (the page's EventSource is watched from the start).
	if err := chromedp.Do(bctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchEventSource})
			return err
		}),
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.ID("tasks")),
		poll(`document.querySelectorAll("#tasks tbody tr td.s-done").length === 3`),
		poll(`document.getElementById("conn").textContent === "live"`),
	); err != nil {
		t.Fatalf("the page after the login link: %v", err)
	}
	checkFromNow(t, bctx, history, false)

	var rec struct {
		ID string `json:"id"`
	}
	out := run("dispatch", proj, "--detach", "--json", "--agent", "sim", "--ready-timeout", "60s", "--timeout", "10m", "ask Ship it?")
	if err := json.Unmarshal([]byte(out), &rec); err != nil || !strings.HasPrefix(rec.ID, "t_") {
		t.Fatalf("dispatch: %v\n%s", err, out)
	}
	row := fmt.Sprintf(`#tasks tr[data-id=%q]`, rec.ID)

	// The task appears by itself (the event stream), needing input;
	// opened, its question with one button per option.
	if err := chromedp.Do(bctx,
		chromedp.WaitVisible(chromedp.CSS(row+` td.s-needs_input`)),
		chromedp.Click(chromedp.CSS(row)),
		chromedp.WaitVisible(chromedp.ID("d-dialog")),
		chromedp.WaitVisible(chromedp.CSS(`#d-options button.option`)),
	); err != nil {
		t.Fatalf("the task needing input: %v", err)
	}
	question, err := chromedp.Run(bctx, chromedp.Text(chromedp.ID("d-question")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(question, "Ship it?") {
		t.Errorf("question shown: %q, want it to hold %q", question, "Ship it?")
	}
	labels, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("#d-options button.option"), (b) => b.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	// An act session shows one Close button: the read-only one stays
	// hidden (a class's display once overrode its hidden attribute).
	if shown, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.getElementById("close-btn2").offsetParent !== null`)); err != nil || shown {
		t.Errorf("the read-only Close button is shown in an act session (%v)", err)
	}
	if strings.Join(labels, "|") != "1. Yes|2. No" {
		t.Fatalf("option buttons: %q, want one per option: 1. Yes, 2. No", labels)
	}

	// "Yes" clicked: answered (a refusal shows at once, in #d-result), and
	// the task ends done, in its row and in the open detail; the dialog
	// goes away.
	if err := chromedp.Do(bctx,
		chromedp.Click(`//div[@id="d-options"]/button[normalize-space(.)="1. Yes"]`),
		poll(`document.getElementById("d-result").textContent !== ""`),
	); err != nil {
		t.Fatalf("clicking Yes: %v", err)
	}
	if result, err := chromedp.Run(bctx, chromedp.Text(chromedp.ID("d-result"))); err != nil || result != "answered 1" {
		t.Fatalf("after clicking Yes the page says %q (%v), want: answered 1", result, err)
	}
	if err := chromedp.Do(bctx,
		chromedp.WaitVisible(chromedp.CSS(row+` td.s-done`)),
		chromedp.WaitVisible(chromedp.CSS(`#d-status.s-done`)),
		chromedp.WaitNotVisible(chromedp.ID("d-dialog")),
	); err != nil {
		t.Fatalf("after clicking Yes: %v", err)
	}
	if status, err := chromedp.Run(bctx, chromedp.Text(chromedp.ID("d-status"))); err != nil || status != "done" {
		t.Errorf("detail status %q (%v), want done", status, err)
	}
	if got := run("status", "--json", rec.ID); !strings.Contains(got, `"status": "done"`) || !strings.Contains(got, "answered: yes") {
		t.Errorf("runner status after the click:\n%s", got)
	}

	// What the page followed came after it opened, and the new task's
	// changes came through it.
	checkFromNow(t, bctx, history, true)

	png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	// RUNNER_TEST_SERVE_SCREENSHOT=FILE keeps the screenshot, to look at.
	shot := os.Getenv("RUNNER_TEST_SERVE_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "serve.png")
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(shot); err != nil || len(b) < 100 || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("screenshot %s: %d bytes, err %v: not a PNG", shot, len(b), err)
	}
}

// watchEventSource, run in the page before its scripts, records the URL
// of each EventSource the page opens and the data of each event it gets
// (window.__sse).
const watchEventSource = `(() => {
  const ES = window.EventSource;
  if (!ES) return;
  window.__sse = { urls: [], data: [] };
  const W = function (url, init) {
    const es = new ES(url, init);
    window.__sse.urls.push(String(url));
    es.addEventListener("message", (e) => window.__sse.data.push(e.data));
    return es;
  };
  W.prototype = ES.prototype;
  window.EventSource = W;
})();`

// lastCursor is the cursor of the last line of runner events --json's out.
func lastCursor(t *testing.T, out string) uint64 {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var ev struct {
		Cursor uint64 `json:"cursor"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil || ev.Cursor == 0 {
		t.Fatalf("the last event of %q: %v", out, err)
	}
	return ev.Cursor
}

// checkFromNow checks that the page opened one event stream, from now,
// and got no event of the history (cursors up to history); with some, at
// least one event after it.
func checkFromNow(t *testing.T, bctx context.Context, history uint64, some bool) {
	t.Helper()
	var sse struct {
		URLs []string `json:"urls"`
		Data []string `json:"data"`
	}
	got, err := chromedp.Run(bctx, chromedp.Evaluate[string](`JSON.stringify(window.__sse)`))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got), &sse); err != nil {
		t.Fatalf("window.__sse %q: %v", got, err)
	}
	if len(sse.URLs) != 1 || !strings.HasSuffix(sse.URLs[0], "/api/v1/events?after=now") {
		t.Errorf("the page's event streams: %q, want one, ?after=now", sse.URLs)
	}
	for _, d := range sse.Data {
		var ev struct {
			Cursor uint64 `json:"cursor"`
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil || ev.Cursor <= history {
			t.Errorf("the page got an event of the history (cursor up to %d): %s", history, d)
		}
	}
	if some && len(sse.Data) == 0 {
		t.Errorf("the page got no event after it opened")
	}
	t.Logf("the page got %d events (the history held %d)", len(sse.Data), history)
}
