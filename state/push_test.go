package state

import (
	"os"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// A push is queued once per key: again while it waits, and again once it
// went (its key stays taken), nothing more is queued; the outbox gives the
// pushes oldest first and a saved push as it was saved.
func TestQueuePushOncePerKey(t *testing.T) {
	s := openTemp(t)
	now := clock.Now().UTC()
	queue := func(key string, at int) bool {
		t.Helper()
		ok, err := s.QueuePush(&Push{Key: key, Queued: now.Add(-clockSeconds(at)), Event: PushEvent{Task: "t_a", Status: "needs_input"}})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !queue("t_a|needs_input|q1", 1) || !queue("t_b|failed", 2) {
		t.Fatal("a new key was not queued")
	}
	if queue("t_a|needs_input|q1", 0) {
		t.Fatal("a key queued twice")
	}
	out, err := s.PushOutbox()
	if err != nil || len(out) != 2 || out[0].Key != "t_b|failed" {
		t.Fatalf("outbox = %v, %v; want t_b's then t_a's", out, err)
	}
	out[1].Tries = map[string]*PushTry{"webhook 1": {Attempts: 2, Error: "500"}}
	if err := s.SavePush(out[1]); err != nil {
		t.Fatal(err)
	}
	again, _ := s.PushOutbox()
	if again[1].Tries["webhook 1"].Attempts != 2 {
		t.Fatalf("saved tries lost: %+v", again[1])
	}
	if err := s.DonePush(again[1]); err != nil {
		t.Fatal(err)
	}
	if queue("t_a|needs_input|q1", 0) {
		t.Fatal("a key queued again after it was sent")
	}
	if left, _ := s.PushOutbox(); len(left) != 1 {
		t.Fatalf("outbox after done = %d pushes, want 1", len(left))
	}
	ents, _ := os.ReadDir(s.pushPath("outbox"))
	if len(ents) != 1 {
		t.Fatalf("outbox holds %d files (a temporary file left?)", len(ents))
	}
}

// One sender at a time; a push's event is streamed though no task changed.
func TestPushSenderAndStream(t *testing.T) {
	s := openTemp(t)
	release, ok := s.PushSender()
	if !ok {
		t.Fatal("no sender runs, yet the lock was not taken")
	}
	if _, ok2 := s.PushSender(); ok2 {
		t.Fatal("two senders")
	}
	release()
	if err := s.StreamPush(t.Context(), StreamEvent{Task: "t_a", Status: "failed", To: "webhook http://127.0.0.1:1/", Reason: "refused"}); err != nil {
		t.Fatal(err)
	}
	evs := readStream(t, s, 0)
	if len(evs) != 1 || evs[0].Type != EventPush || evs[0].Reason != "refused" || evs[0].Cursor == 0 {
		t.Fatalf("stream = %+v", evs)
	}
	if err := s.StreamPush(t.Context(), StreamEvent{Task: "t_a", Status: "sent"}); err != nil {
		t.Fatal(err)
	}
	if evs := readStream(t, s, evs[0].Cursor); len(evs) != 1 || evs[0].Status != "sent" {
		t.Fatalf("second push event: %+v", evs)
	}
	st := map[string]*PushTargetStatus{"webhook 1": {Error: "refused", Task: "t_a"}}
	if err := s.SetPushStatus(st); err != nil {
		t.Fatal(err)
	}
	if got, err := s.PushStatus(); err != nil || got["webhook 1"].Error != "refused" {
		t.Fatalf("status = %v, %v", got, err)
	}
}

func clockSeconds(n int) time.Duration { return time.Duration(n) * time.Second }
