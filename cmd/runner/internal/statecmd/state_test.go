package statecmd

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/state"
	"github.com/spf13/cobra"
)

// fake is a factory over a real state store in a temporary directory,
// counting the opens.
type fake struct {
	f     *cmdkit.Factory
	b     *cmdkit.Buffers
	s     *state.Store
	opens int
}

func newFake(t *testing.T, tasks ...*state.Task) *fake {
	t.Helper()
	x := &fake{s: statetest.WithTasks(t, tasks...)}
	x.f, x.b = cmdkit.Fake("", nil)
	x.f.Store = func() (*state.Store, error) { x.opens++; return x.s, nil }
	return x
}

// run runs the command build makes with args and returns its error.
func (x *fake) run(t *testing.T, build func(*cmdkit.Factory) *cobra.Command, args ...string) error {
	t.Helper()
	return x.b.Run(t.Context(), build(x.f), args...)
}

func TestStatePath(t *testing.T) {
	x := newFake(t)
	if err := x.run(t, NewCmd, "path"); err != nil || strings.TrimSpace(x.b.Out.String()) != x.s.Path() {
		t.Errorf("state path: %v %q, want %s", err, x.b.Out.String(), x.s.Path())
	}
	if err := x.run(t, NewCmd, "path", "--json"); err != nil || !strings.Contains(x.b.Out.String(), x.s.Dir()) || !x.b.JSON {
		t.Errorf("state path --json: %v %q", err, x.b.Out.String())
	}
}

func TestStateShow(t *testing.T) {
	x := newFake(t, statetest.Supervised("t_show0001", "", state.StatusRunning))
	if err := x.run(t, NewCmd, "show"); err != nil || !strings.Contains(x.b.Out.String(), "Projects: 1") {
		t.Errorf("state show: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, NewCmd, "show", "--json"); err != nil {
		t.Fatalf("state show --json: %v", err)
	}
	var dump map[string]any
	if err := json.Unmarshal(x.b.Out.Bytes(), &dump); err != nil || !strings.Contains(x.b.Out.String(), "t_show0001") {
		t.Errorf("state show --json: %v %q", err, x.b.Out.String())
	}
}

// TestStateRepair: a healthy state is left alone; a corrupt one is moved
// aside and rebuilt, the report said in words or JSON.
func TestStateRepair(t *testing.T) {
	x := newFake(t)
	if err := x.run(t, NewCmd, "repair"); err != nil || !strings.Contains(x.b.Out.String(), "healthy") {
		t.Errorf("repair of a healthy state: %v %q", err, x.b.Out.String())
	}
	if err := os.WriteFile(x.s.Path(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := x.run(t, NewCmd, "repair", "--json"); err != nil || !x.b.JSON {
		t.Fatalf("repair of a corrupt state: %v %q", err, x.b.ErrOut.String())
	}
	aside, _ := filepath.Glob(x.s.Path() + ".corrupt-*")
	if len(aside) != 1 {
		t.Errorf("the corrupt file moved aside: %v, want one (report %q)", aside, x.b.Out.String())
	}
	if _, err := x.s.Read(t.Context()); err != nil {
		t.Errorf("the state after repair: %v", err)
	}
}

// TestStateNeedsASubcommand: `runner state` alone shows its help, an
// argument is a FlagError.
func TestStateNeedsASubcommand(t *testing.T) {
	x := newFake(t)
	var fe *cmdkit.FlagError
	if err := x.run(t, NewCmd, "show", "extra"); !errors.As(err, &fe) {
		t.Errorf("state show extra: %v, want a FlagError", err)
	}
	if x.opens != 0 {
		t.Errorf("bad arguments opened the store %d times", x.opens)
	}
}

// TestStoreErrorIsTheCommands: a store that cannot be opened is the
// command's error, unchanged (main maps it).
func TestStoreErrorIsTheCommands(t *testing.T) {
	x := newFake(t)
	bad := errors.New("state directory unreadable")
	x.f.Store = func() (*state.Store, error) { return nil, bad }
	for _, args := range [][]string{{"path"}, {"show"}, {"repair"}} {
		if err := x.run(t, NewCmd, args...); !errors.Is(err, bad) {
			t.Errorf("state %v: %v", args, err)
		}
	}
	if err := x.run(t, NewPruneCmd); !errors.Is(err, bad) {
		t.Errorf("prune: %v", err)
	}
}

func TestPrune(t *testing.T) {
	done := statetest.Supervised("t_done0001", "", state.StatusDone)
	done.SupervisorPID = 0
	done.Ended = clock.Now().Add(-2 * time.Hour) // within the retention (24h), past --older-than 1h
	x := newFake(t, statetest.Supervised("t_live0001", "", state.StatusRunning))
	if err := x.s.Update(t.Context(), func(st *state.State) error { st.Tasks[done.ID] = done; return nil }); err != nil {
		t.Fatal(err)
	}
	x.s.Retention = 0 // keeps finished tasks
	if err := x.run(t, NewPruneCmd); err != nil || !strings.Contains(x.b.Out.String(), "the retention is 0") {
		t.Errorf("prune at retention 0: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, NewPruneCmd, "--json"); err != nil || strings.TrimSpace(x.b.Out.String()) != "{\n  \"pruned\": []\n}" {
		t.Errorf("prune --json at retention 0: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, NewPruneCmd, "--older-than", "1h", "--json"); err != nil || !strings.Contains(x.b.Out.String(), "t_done0001") ||
		strings.Contains(x.b.Out.String(), "t_live0001") {
		t.Errorf("prune --older-than 1h: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, NewPruneCmd, "--older-than", "0s"); err != nil || strings.TrimSpace(x.b.Out.String()) != "pruned 0 finished task(s)" {
		t.Errorf("prune again: %v %q", err, x.b.Out.String())
	}
	st := statetest.Read(t, x.s)
	if _, ok := st.Tasks["t_live0001"]; !ok {
		t.Error("a running task was pruned")
	}
}
