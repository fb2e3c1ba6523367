// Package statetest builds states for tests.
package statetest

import (
	"strings"
	"time"

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
