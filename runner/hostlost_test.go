package runner

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/runner/supervisor"
	"github.com/runner-cli/runner/state"
)

// TestUnreachableAtStart: a supervisor that cannot start because its
// task's host does not answer records the task orphaned, with the host and
// why (it used to leave it running with no supervisor); any other error,
// or a task here, changes nothing.
func TestUnreachableAtStart(t *testing.T) {
	on := statetest.Supervised("t_aaaa0000", "", state.StatusRunning)
	on.Tmux.Host = "h1"
	other := statetest.Supervised("t_bbbb0000", "", state.StatusRunning)
	other.Tmux.Host = "h1"
	here := statetest.Supervised("t_cccc0000", "", state.StatusRunning)
	env := msgEnv(t, on, other, here)
	if err := env.Store.UpdateHosts(t.Context(), func(m map[string]*state.Host) error {
		m["h1"] = &state.Host{Name: "h1", Destination: "u@h1"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	down := fmt.Errorf("host h1 (u@h1): %w: ssh: connect to host h1 port 22: Connection refused", hosts.ErrUnreachable)
	err := unreachableAtStart(t.Context(), env, on, down)
	if !errors.Is(err, supervisor.ErrOrphaned) || !errors.Is(err, remote.ErrHostLost) || !errors.Is(err, hosts.ErrUnreachable) {
		t.Errorf("error %v: want it orphaned, the host lost and unreachable", err)
	}
	plain := errors.New("task t_bbbb0000: local copy of the host's files: disk full")
	if got := unreachableAtStart(t.Context(), env, other, plain); got != plain {
		t.Errorf("another error came back as %v", got)
	}
	if got := unreachableAtStart(t.Context(), env, here, down); got != down {
		t.Errorf("a task here: %v", got)
	}
	st := statetest.Read(t, env.Store)
	if tk := st.Tasks[on.ID]; tk.Status != state.StatusOrphaned ||
		!strings.Contains(tk.LastReason(), "host h1 unreachable since") || !strings.Contains(tk.LastReason(), "(u@h1)") ||
		!strings.Contains(tk.LastReason(), "the supervisor could not start") || !strings.Contains(tk.LastReason(), "runner resume "+on.ID) {
		t.Errorf("%s: %s (%s)", on.ID, tk.Status, tk.LastReason())
	}
	for _, id := range []string{other.ID, here.ID} {
		if tk := st.Tasks[id]; tk.Status != state.StatusRunning {
			t.Errorf("%s: %s (%s), want it left running", id, tk.Status, tk.LastReason())
		}
	}
}
