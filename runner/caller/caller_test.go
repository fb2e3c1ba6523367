package caller

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestTask: the environment's task when it is one of st; else the task
// whose pane's process is an ancestor of this process; else none.
func TestTask(t *testing.T) {
	me := &state.Task{ID: "t_parent01", Status: state.StatusRunning, Tmux: state.TmuxTarget{Session: "s", Pane: "%1"}}
	st := &state.State{Tasks: map[string]*state.Task{me.ID: me}}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "RUNNER_TASK_ID" {
				return v
			}
			return ""
		}
	}
	noList := func(context.Context) ([]tmuxctl.PaneInfo, error) { return nil, errors.New("no tmux here") }
	if got := Task(t.Context(), env("t_parent01"), noList, st, nil); got != me.ID {
		t.Errorf("named by the environment: %q", got)
	}
	// Not named (a scrubbed environment): the pane whose process is this
	// test's parent holds it.
	panes := []tmuxctl.PaneInfo{{ID: "%1", Session: "s", PID: os.Getppid()}}
	if got := Task(t.Context(), env(""), noList, st, panes); got != me.ID {
		t.Errorf("found by its pane's process: %q", got)
	}
	// A name of no task, and no pane above: none.
	panes[0].PID = 1 << 30
	if got := Task(t.Context(), env("t_nosuch01"), noList, st, panes); got != "" {
		t.Errorf("no task: %q", got)
	}
	// A pane of another session with the same id is not the task's.
	panes = []tmuxctl.PaneInfo{{ID: "%1", Session: "other", PID: os.Getppid()}}
	if got := Task(t.Context(), env(""), noList, st, panes); got != "" {
		t.Errorf("another session's pane: %q", got)
	}
}

// TestImports keeps the package doc true.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/procinfo", "state", "tmuxctl")
}
