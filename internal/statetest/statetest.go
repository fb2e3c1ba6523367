// Package statetest builds states for tests.
package statetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// Plan builds a state from "id:status[:project[:after,after]]" specs,
// created one second apart in the order given.
func Plan(specs ...string) *state.State {
	st := state.New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, spec := range specs {
		f := strings.Split(spec, ":")
		t := &state.Task{ID: f[0], Status: state.Status(f[1]), Created: t0.Add(time.Duration(i) * time.Second)}
		if len(f) > 2 {
			t.Project = f[2]
		}
		if len(f) > 3 && f[3] != "" {
			t.After = strings.Split(f[3], ",")
		}
		st.Tasks[t.ID] = t
	}
	return st
}

// Store opens a new state store in a temporary directory of t's.
func Store(t testing.TB) *state.Store {
	t.Helper()
	s, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// WithTasks is Store holding project "api" (at /tmp) and tasks.
func WithTasks(t testing.TB, tasks ...*state.Task) *state.Store {
	t.Helper()
	s := Store(t)
	if err := s.Update(t.Context(), func(st *state.State) error {
		st.Projects["api"] = &state.Project{Name: "api", Dir: "/tmp"}
		for _, x := range tasks {
			st.Tasks[x.ID] = x
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// Supervised is a task of project "api" whose supervisor is this process
// (so a reconcile leaves it as it is), its pane %999 (on no server).
func Supervised(id, parent string, status state.Status) *state.Task {
	return &state.Task{ID: id, Project: "api", Agent: "sim", Parent: parent, Status: status,
		SupervisorPID: os.Getpid(), Created: clock.Now(), Tmux: state.TmuxTarget{Pane: "%999"}}
}

// Read reads s's state, failing t on an error.
func Read(t testing.TB, s *state.Store) *state.State {
	t.Helper()
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st
}
