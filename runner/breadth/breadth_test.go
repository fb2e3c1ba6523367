package breadth

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports: breadth is a leaf below the core.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "runner/fault", "state")
}

// TestCheck: a tree of tasks is bounded in breadth as well as
// depth: live tasks at once and child dispatches a minute; ended tasks
// and other trees do not count, and a root dispatch is never refused.
func TestCheck(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	tree := func(live, ended int, age time.Duration) *state.State {
		s := &state.State{Tasks: map[string]*state.Task{}}
		s.Tasks["t_root00000000"] = &state.Task{ID: "t_root00000000", Status: state.StatusRunning, Created: now.Add(-time.Hour)}
		s.Tasks["t_other0000000"] = &state.Task{ID: "t_other0000000", Status: state.StatusRunning, Created: now}
		for i := range live + ended {
			st := state.StatusRunning
			if i >= live {
				st = state.StatusDone
			}
			id := fmt.Sprintf("t_child%07d", i)
			s.Tasks[id] = &state.Task{ID: id, Parent: "t_root00000000", Level: 2, Status: st, Created: now.Add(-age)}
		}
		return s
	}
	b := Bounds{MaxTasks: 4, PerMinute: 5}
	for _, c := range []struct {
		name   string
		s      *state.State
		parent string
		refuse bool
	}{
		{"a root", tree(10, 0, time.Hour), "", false},
		{"room left", tree(2, 0, time.Hour), "t_child0000000", false},
		{"live tasks at the bound", tree(3, 0, time.Hour), "t_child0000000", true},
		{"ended ones do not count", tree(2, 20, time.Hour), "t_root00000000", false},
		{"too many this minute", tree(0, 5, 30*time.Second), "t_root00000000", true},
		{"a minute ago is past", tree(0, 5, 61*time.Second), "t_root00000000", false},
		{"another tree", tree(3, 0, time.Hour), "t_other0000000", false},
	} {
		err := Check(c.s, c.parent, b, now)
		if got := err != nil; got != c.refuse || err != nil && !errors.Is(err, fault.ErrUsage) {
			t.Errorf("%s: %v, want refused %v (a usage error)", c.name, err, c.refuse)
		}
	}
	if err := Check(tree(100, 0, 0), "t_root00000000", Bounds{}, now); err != nil {
		t.Errorf("no bounds: %v", err)
	}
}
