package push

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/state"
)

// Backoff doubles from a second up to a minute.
func TestBackoff(t *testing.T) {
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute}
	for i, w := range want {
		if got := Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %s, want %s", i+1, got, w)
		}
	}
}

// A signature verifies its body under its secret, not another body or
// another secret.
func TestSignVerify(t *testing.T) {
	body := []byte(`{"task":"t_1"}`)
	sig := Sign("s3cret", body)
	if !strings.HasPrefix(sig, "sha256=") || !Verify("s3cret", body, sig) {
		t.Fatalf("Sign = %q does not verify", sig)
	}
	if Verify("s3cret", []byte(`{"task":"t_2"}`), sig) || Verify("other", body, sig) {
		t.Error("a changed body or another secret verifies")
	}
}

// asking is a task at a dialog.
func asking(id, question string) *state.Task {
	t := &state.Task{ID: id, Project: "proj", Agent: "sim", Dir: "/src", Text: "make hello.txt", TurnCount: 1, Question: question}
	_ = t.SetStatus(state.StatusRunning, clock.Now().UTC(), "delivered")
	_ = t.SetStatus(state.StatusNeedsInput, clock.Now().UTC(), "the agent asks: "+question)
	return t
}

// One dialog has one key however often it is seen; its digest names it
// over the question; another status, turn or dialog is another key.
func TestKey(t *testing.T) {
	a := asking("t_1", "Allow?")
	d := &state.PushDialog{Digest: "abc", Question: "Allow edit?"}
	if Key(a, d) != Key(a, &state.PushDialog{Digest: "abc"}) {
		t.Error("one dialog, two keys")
	}
	other := *a
	other.TurnCount = 2
	if Key(a, d) == Key(a, nil) || Key(a, d) == Key(&other, d) {
		t.Error("another dialog or turn has the same key")
	}
	done := asking("t_1", "Allow?")
	_ = done.SetStatus(state.StatusDone, clock.Now().UTC(), "turn ended")
	if Key(done, d) != Key(done, nil) || strings.Contains(Key(done, d), "abc") {
		t.Errorf("a done task's key names a dialog: %q", Key(done, d))
	}
}

// An event carries the dialog's question over the task's, and a link to
// the task's page with its id escaped.
func TestEvent(t *testing.T) {
	a := asking("t_1/x", "Allow?")
	ev := Event(a, "https://box.example:7777/", &state.PushDialog{Digest: "abc", Question: "Allow edit?"})
	if ev.Question != "Allow edit?" || ev.URL != "https://box.example:7777/#/tasks/t_1%2Fx" || ev.Status != string(state.StatusNeedsInput) {
		t.Errorf("event: %+v", ev)
	}
	if ev := Event(a, "", nil); ev.Question != "Allow?" || ev.URL != "" || ev.Title != "make hello.txt" {
		t.Errorf("event without dialog or server: %+v", ev)
	}
}

// Config.Queue queues a push a target wants and starts a sender; the same
// key again queues nothing and starts none; no target, or none that
// wants the status, queues nothing; a sender that cannot start is said.
func TestConfigQueue(t *testing.T) {
	s := statetest.Store(t)
	a := asking("t_1", "Allow?")
	var starts int
	var warned []string
	warn := func(format string, args ...any) { warned = append(warned, format) }
	start := func() error { starts++; return nil }
	Config{}.Queue(s, a, start, warn)
	Config{Targets: []config.PushTarget{{Kind: config.PushNtfy, URL: "https://ntfy.example/x", Events: []string{"done"}}}}.Queue(s, a, start, warn)
	if left, _ := s.PushOutbox(); len(left) != 0 || starts != 0 {
		t.Fatalf("no target wants it: %d queued, %d senders started", len(left), starts)
	}
	c := Config{Targets: []config.PushTarget{{Kind: config.PushNtfy, URL: "https://ntfy.example/x"}}}
	c.Queue(s, a, start, warn)
	c.Queue(s, a, start, warn)
	if left, _ := s.PushOutbox(); len(left) != 1 || starts != 1 || len(warned) != 0 {
		t.Fatalf("queued twice: %d in the outbox, %d senders started, warned %v; want 1, 1, none", len(left), starts, warned)
	}
	b := asking("t_2", "Allow?")
	c.Queue(s, b, func() error { return errors.New("no exec") }, warn)
	if len(warned) != 1 {
		t.Errorf("a sender that could not start was not said: %v", warned)
	}
}

// Config.Dialog reads no dialog of a task that does not need input, nor
// of an agent it has no profile of.
func TestConfigDialogNone(t *testing.T) {
	a := asking("t_1", "Allow?")
	if d := (Config{}).Dialog(a); d != nil {
		t.Errorf("no profile: dialog %+v", d)
	}
	done := asking("t_1", "Allow?")
	_ = done.SetStatus(state.StatusDone, clock.Now().UTC(), "turn ended")
	if d := (Config{}).Dialog(done); d != nil {
		t.Errorf("a done task: dialog %+v", d)
	}
}
