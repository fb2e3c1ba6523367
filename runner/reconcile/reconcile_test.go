package reconcile

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestReconcileReusedSupervisorPID: a running task whose supervisor's pid
// is alive but is another process now (a reboot, or the pid given to a new
// program) is not kept running for ever: the recorded identity decides.
func TestReconcileReusedSupervisorPID(t *testing.T) {
	noPanes := func() (map[string]tmuxctl.PaneInfo, error) { return map[string]tmuxctl.PaneInfo{}, nil }
	for _, tc := range []struct {
		name  string
		ident string
		stale bool
	}{
		{"the recorded process", proctree.Identity(os.Getpid()), false},
		{"a record without identity (older runner)", "", false},
		{"the pid of a process of another boot", "00000000-0000-0000-0000-000000000000:12345", true},
	} {
		tk := &state.Task{ID: "t_reused01", Status: state.StatusRunning, SupervisorPID: os.Getpid(), SupervisorStart: tc.ident,
			Tmux: state.TmuxTarget{Session: "s", Window: "t_reused01", Pane: "%9"}}
		st := &state.State{Tasks: map[string]*state.Task{tk.ID: tk}}
		changes, err := Stale(st, noPanes)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(changes) > 0; got != tc.stale {
			t.Errorf("%s: changes %+v, want stale %v", tc.name, changes, tc.stale)
		}
	}
}

// TestImports keeps the package doc true: the state, the queue's rules,
// the process table and tmux's types; the tmux calls come through Deps.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "runner/messaging", "runner/proctree", "runner/record", "state", "tmuxctl")
}
