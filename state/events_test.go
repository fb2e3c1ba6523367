package state

import (
	"slices"
	"testing"

	"github.com/runner-cli/runner/internal/clock"
)

func readStream(t *testing.T, s *Store, after uint64) []StreamEvent {
	t.Helper()
	var out []StreamEvent
	if _, err := s.ReadEvents(after, func(line []byte) bool {
		ev, err := ParseEvent(line)
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := EventCursor(line); !ok || c != ev.Cursor {
			t.Fatalf("EventCursor(%s) = %d, %v", line, c, ok)
		}
		out = append(out, ev)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func types(evs []StreamEvent) []string {
	var out []string
	for _, ev := range evs {
		s := ev.Type + ":" + ev.Status
		if ev.Type == EventOverlap {
			s = ev.Type + ":" + ev.With
		}
		out = append(out, s)
	}
	return out
}

func TestEventsOnePerChangeInOrder(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	now := clock.Now().UTC()
	a, b := RandomTaskID(), RandomTaskID()
	update := func(fn func(*State) error) {
		t.Helper()
		if err := s.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	update(func(st *State) error {
		for _, id := range []string{a, b} {
			x := &Task{ID: id, Agent: "sim", Dir: "/src", Created: now}
			if err := x.SetStatus(StatusQueued, now, "dispatched"); err != nil {
				return err
			}
			st.Tasks[id] = x
		}
		return nil
	})
	update(func(st *State) error {
		x := st.Task(a)
		_ = x.SetStatus(StatusRunning, now, "delivered")
		_ = x.SetStatus(StatusDone, now, "finished")
		x.AddTurnAnswer(now, "did it", "the answer\nmore")
		x.Overlaps = []Overlap{{Task: b, Files: []string{"x.go"}, Since: now}}
		st.AddMessage(&Message{ID: "m_aaaaaaaa", From: a, To: b, Type: MessageUpdate, Text: "hi", Status: MessagePending, Created: now})
		return nil
	})
	// A write that changes nothing of the stream's adds nothing.
	update(func(st *State) error { st.Task(a).Answer = "x"; return nil })
	update(func(st *State) error {
		st.Messages["m_aaaaaaaa"].Status = MessageDelivered
		st.Task(a).Overlaps = nil
		return nil
	})
	evs := readStream(t, s, 0)
	want := []string{"status:queued", "status:queued", "status:running", "status:done", "turn:", "overlap:" + b, "message:pending", "overlap:" + b, "message:delivered"}
	if got := types(evs); !slices.Equal(got[:2], want[:2]) || !slices.Equal(got[2:], want[2:]) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i, ev := range evs {
		if ev.Cursor != uint64(i+1) || ev.V != EventsSchema {
			t.Errorf("event %d: cursor %d v %d", i, ev.Cursor, ev.V)
		}
	}
	if evs[3].Reason != "finished" || evs[4].Answer != "the answer" || len(evs[7].Files) != 0 {
		t.Errorf("fields: %+v %+v %+v", evs[3], evs[4], evs[7])
	}
	// From a cursor: exactly what came after it.
	if rest := readStream(t, s, 6); len(rest) != 3 || rest[0].Cursor != 7 {
		t.Errorf("after 6: %+v", rest)
	}
	st, err := s.Read(ctx)
	if err != nil || st.EventSeq != uint64(len(evs)) {
		t.Errorf("the index's last cursor %d, want %d (%v)", st.EventSeq, len(evs), err)
	}
}
