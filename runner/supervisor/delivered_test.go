package supervisor

import (
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// TestFoldRunning: a delivery whose turn's hook came while it was
// confirmed leaves the record of the task running to the end's write
// (FoldRunning), which records it first; without FoldRunning, or when
// another write comes first (a question, an interruption), it is recorded
// alone, before that write.
func TestFoldRunning(t *testing.T) {
	deliver := func(t *testing.T, fold bool) (*Supervisor, *book) {
		t.Helper()
		s, pn, b, w := newSupervisor(t, "claude", Settings{})
		s.FoldRunning = fold
		b.task.Status = state.StatusReady
		w.hookNow = &profile.HookEvent{Name: "Stop"}
		pn.delivered = []string{"any screen"}
		if err := s.Deliver(t.Context(), "say hi", true); err != nil {
			t.Fatal(err)
		}
		return s, b
	}
	running := func(log []string) int {
		return slices.IndexFunc(log, func(l string) bool { return strings.HasPrefix(l, "running: delivered") })
	}
	t.Run("folded into the end's write", func(t *testing.T) {
		s, b := deliver(t, true)
		if running(b.log) >= 0 || b.task.Delivery != "" {
			t.Fatalf("recorded at the delivery: %q", b.log)
		}
		e := &ender{book: *b}
		var end state.Task
		e.onEnd = func(tt TurnText) {
			if tt.Delivered == nil {
				t.Fatal("the end's write has no delivery to record")
			}
			end = state.Task{ID: "t_test", Status: state.StatusReady}
			tt.Delivered(&end)
		}
		if err := s.Conclude(t.Context(), e, Outcome{Status: state.StatusDone, Reason: "r"}); err != nil {
			t.Fatal(err)
		}
		if end.Status != state.StatusRunning || end.Delivery == "" || end.TurnPrompt == nil || end.Started.IsZero() ||
			len(end.History) != 1 || !strings.HasPrefix(end.History[0].Reason, "delivered") {
			t.Errorf("the delivery as the end's write records it: %+v", end)
		}
		if running(b.log) >= 0 {
			t.Errorf("recorded alone as well: %q", b.log)
		}
	})
	t.Run("without FoldRunning", func(t *testing.T) {
		_, b := deliver(t, false)
		if running(b.log) < 0 || b.task.Delivery == "" {
			t.Errorf("not recorded at the delivery: %q", b.log)
		}
	})
	t.Run("a question first", func(t *testing.T) {
		s, b := deliver(t, true)
		if err := s.Conclude(t.Context(), &ender{}, Outcome{Status: state.StatusNeedsInput, Reason: "Proceed?"}); err == nil {
			t.Fatal("no error for needs input")
		}
		if running(b.log) < 0 || b.task.Delivery == "" {
			t.Errorf("the delivery not recorded before the question: %q", b.log)
		}
	})
	t.Run("an interruption first", func(t *testing.T) {
		s, b := deliver(t, true)
		if _, err := s.Ending(t.Context(), t.Context(), b, ErrOrphaned); err == nil {
			t.Fatal("no error for an orphaned task")
		}
		if i := running(b.log); i < 0 || i != 0 || len(b.log) < 2 || !strings.HasPrefix(b.log[1], "orphaned") {
			t.Errorf("want the delivery recorded, then orphaned: %q", b.log)
		}
	})
}
