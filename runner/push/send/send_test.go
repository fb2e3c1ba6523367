package send

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/push"
	"github.com/runner-cli/runner/state"
)

// receiver is a local push receiver: what it got, and the status codes it
// answers with, one per request (200 once they are used up).
type receiver struct {
	*httptest.Server
	mu    sync.Mutex
	got   []got
	codes []int
}

type got struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, codes ...int) *receiver {
	r := &receiver{codes: codes}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, got{req.Header.Clone(), b})
		code := http.StatusOK
		if len(r.codes) > 0 {
			code, r.codes = r.codes[0], r.codes[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []got {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]got(nil), r.got...)
}

// asking is a task at a dialog.
func asking(id, question string) *state.Task {
	t := &state.Task{ID: id, Project: "proj", Agent: "sim", Dir: "/src", Text: "make hello.txt", TurnCount: 1, Question: question}
	_ = t.SetStatus(state.StatusRunning, clock.Now().UTC(), "delivered")
	_ = t.SetStatus(state.StatusNeedsInput, clock.Now().UTC(), "the agent asks: "+question)
	return t
}

func queue(t *testing.T, s *state.Store, targets []config.PushTarget, task *state.Task, dialog *state.PushDialog) bool {
	t.Helper()
	ok, err := push.Queue(s, targets, "https://box.example:7777/", task, dialog)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func send(t *testing.T, s *state.Store, targets []config.PushTarget) {
	t.Helper()
	snd := &Sender{Store: s, Targets: targets, Backoff: func(int) time.Duration { return time.Millisecond },
		Poll: 5 * time.Millisecond, Log: t.Logf}
	if err := snd.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.PushOutbox(); len(left) != 0 {
		t.Fatalf("the sender ended with %d pushes queued", len(left))
	}
}

// A webhook gets the event as JSON, signed with its secret; the receiver
// verifies the signature, and a changed body does not verify.
func TestWebhookSigned(t *testing.T) {
	s := statetest.Store(t)
	r := newReceiver(t)
	targets := []config.PushTarget{{Kind: config.PushWebhook, URL: r.URL + "/hook", Secret: "s3cret"}}
	dialog := &state.PushDialog{Digest: "d1", Question: "Create hello.txt?", Options: []state.PushOption{{Key: "1", Label: "Yes"}, {Key: "2", Label: "No"}}}
	task := asking("t_web", "Create hello.txt?")
	if !queue(t, s, targets, task, dialog) {
		t.Fatal("not queued")
	}
	send(t, s, targets)
	reqs := r.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	g := reqs[0]
	sig := g.header.Get(push.SignatureHeader)
	if !strings.HasPrefix(sig, "sha256=") || !push.Verify("s3cret", g.body, sig) {
		t.Fatalf("signature %q does not verify the body", sig)
	}
	if push.Verify("s3cret", append(g.body, ' '), sig) || push.Verify("other", g.body, sig) {
		t.Fatal("a changed body or another secret verifies")
	}
	if ct := g.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var ev state.PushEvent
	if err := json.Unmarshal(g.body, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Task != "t_web" || ev.Status != "needs_input" || ev.Project != "proj" || ev.Agent != "sim" ||
		ev.Question != "Create hello.txt?" || ev.URL != "https://box.example:7777/#/tasks/t_web" ||
		ev.Dialog == nil || ev.Dialog.Digest != "d1" || len(ev.Dialog.Options) != 2 {
		t.Errorf("body = %s", g.body)
	}
	if strings.Contains(string(g.body), "s3cret") {
		t.Error("the secret is in the body")
	}
	st, _ := s.PushStatus()
	if ts := st[targets[0].ID()]; ts == nil || ts.LastSent.IsZero() || ts.Error != "" {
		t.Errorf("status = %+v", ts)
	}
}

// ntfy gets a message to its topic with Title, Priority, Tags and Click.
func TestNtfyHeaders(t *testing.T) {
	s := statetest.Store(t)
	r := newReceiver(t)
	targets := []config.PushTarget{{Kind: config.PushNtfy, URL: r.URL + "/runner-topic"}}
	queue(t, s, targets, asking("t_nt", "Delete everything?"), nil)
	send(t, s, targets)
	reqs := r.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	h := reqs[0].header
	for k, want := range map[string]string{"Title": "runner: t_nt needs input (proj)", "Priority": "high",
		"Tags": "question,runner", "Click": "https://box.example:7777/#/tasks/t_nt"} {
		if h.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, h.Get(k), want)
		}
	}
	if !strings.HasPrefix(string(reqs[0].body), "Delete everything?") {
		t.Errorf("message = %q", reqs[0].body)
	}
	if h.Get(push.SignatureHeader) != "" {
		t.Error("an ntfy message is signed")
	}
}

// A receiver that fails (500) is tried again, with backoff, until it
// takes the push: one push, three requests, the last a success.
func TestRetryAfter500(t *testing.T) {
	s := statetest.Store(t)
	r := newReceiver(t, 500, 503)
	targets := []config.PushTarget{{Kind: config.PushWebhook, URL: r.URL}}
	queue(t, s, targets, asking("t_retry", "Proceed?"), nil)
	send(t, s, targets)
	if n := len(r.requests()); n != 3 {
		t.Fatalf("%d requests, want 3 (500, 503, 200)", n)
	}
	st, _ := s.PushStatus()
	ts := st[targets[0].ID()]
	if ts == nil || ts.LastSent.IsZero() || ts.Error != "HTTP 503" {
		t.Errorf("status = %+v: want sent, the last failure HTTP 503", ts)
	}
	evs := pushEvents(t, s)
	if len(evs) != 1 || evs[0].Status != "sent" || evs[0].Task != "t_retry" {
		t.Errorf("push events = %+v", evs)
	}
}

// One push per dialog: the same dialog seen again (a redraw, a supervisor
// noting it again) is not queued again, before or after it went; the same
// question in a later turn, or another dialog, is.
func TestDedupeOnePushPerDialog(t *testing.T) {
	s := statetest.Store(t)
	r := newReceiver(t)
	targets := []config.PushTarget{{Kind: config.PushWebhook, URL: r.URL}}
	task := asking("t_dup", "Create hello.txt?")
	if !queue(t, s, targets, task, nil) {
		t.Fatal("the first push was not queued")
	}
	for range 3 {
		if queue(t, s, targets, task, nil) {
			t.Fatal("a redraw of the same dialog queued a second push")
		}
	}
	send(t, s, targets)
	if queue(t, s, targets, task, nil) {
		t.Fatal("the same dialog queued again once its push went")
	}
	later := asking("t_dup", "Create hello.txt?")
	later.TurnCount = 2
	other := asking("t_dup", "Create bye.txt?")
	if !queue(t, s, targets, later, nil) || !queue(t, s, targets, other, nil) {
		t.Fatal("a new dialog was not queued")
	}
	send(t, s, targets)
	if n := len(r.requests()); n != 3 {
		t.Fatalf("%d requests, want 3 (one per dialog)", n)
	}
}

// A dead receiver holds nothing up: queueing makes no connection (a
// receiver that never answers sees nothing until the sender runs); the
// sender gives up on a target that refuses after its attempts, says so in
// the status and the event stream, and still delivers to the live one.
// The default events leave done out.
func TestDeadReceiver(t *testing.T) {
	s := statetest.Store(t)
	hang := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	t.Cleanup(func() { close(hang); hanging.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/hook?token=hidden-token"
	ln.Close()
	live := newReceiver(t)
	targets := []config.PushTarget{{Kind: config.PushWebhook, URL: dead}, {Kind: config.PushNtfy, URL: live.URL}}
	done := asking("t_done", "")
	_ = done.SetStatus(state.StatusDone, clock.Now().UTC(), "finished")
	if queue(t, s, targets, done, nil) {
		t.Error("done was queued: no target asked for it")
	}
	if !queue(t, s, append(targets, config.PushTarget{Kind: config.PushWebhook, URL: hanging.URL}), asking("t_dead", "Go on?"), nil) {
		t.Fatal("not queued")
	}
	send(t, s, targets)
	if n := len(live.requests()); n != 1 {
		t.Fatalf("the live target got %d requests, want 1", n)
	}
	st, _ := s.PushStatus()
	ts := st[targets[0].ID()]
	if ts == nil || ts.LastFailure.IsZero() || !ts.LastSent.IsZero() || !strings.Contains(ts.Error, "refused") {
		t.Fatalf("dead target's status = %+v", ts)
	}
	var failed []state.StreamEvent
	for _, ev := range pushEvents(t, s) {
		if ev.Status == "failed" {
			failed = append(failed, ev)
		}
	}
	if len(failed) != 1 || failed[0].To != targets[0].ID() || strings.Contains(failed[0].To+failed[0].Reason, "hidden-token") {
		t.Errorf("failed push events = %+v", failed)
	}
}

func pushEvents(t *testing.T, s *state.Store) []state.StreamEvent {
	t.Helper()
	var out []state.StreamEvent
	if _, err := s.ReadEvents(0, func(line []byte) bool {
		ev, err := state.ParseEvent(line)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == state.EventPush {
			out = append(out, ev)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
