package gc

import (
	"testing"
	"time"

	"github.com/runner-cli/runner/state"
)

func TestAutoGCDue(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	st := state.New()
	st.Tasks["t_a"] = &state.Task{ID: "t_a", Status: state.StatusDone, Ended: now.Add(-time.Hour), Tmux: state.TmuxTarget{Pane: "%1"}}
	st.Tasks["t_b"] = &state.Task{ID: "t_b", Status: state.StatusRunning, Tmux: state.TmuxTarget{Pane: "%2"}}
	if AutoGCDue(st, 2*time.Hour, now) {
		t.Error("due for a task that ended 1h ago with close_after 2h")
	}
	if !AutoGCDue(st, 30*time.Minute, now) {
		t.Error("not due for a task that ended 1h ago with close_after 30m")
	}
	if AutoGCDue(st, 0, now) {
		t.Error("due with close_after 0 (keep)")
	}
	st.Tasks["t_a"].Reclaimed = now
	if AutoGCDue(st, 30*time.Minute, now) {
		t.Error("due for a task already reclaimed")
	}
}
