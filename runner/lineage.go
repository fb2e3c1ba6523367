package runner

import (
	"context"

	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/state"
)

// lineage is where a new task sits: its parent, level and source.
type lineage struct {
	parent string
	level  int
	source string
}

// dispatchLineage makes a dispatch from inside a runner pane a child of
// that pane's task, refused past the config's max_level.
func dispatchLineage(ctx context.Context, env *Env, st *state.State, req DispatchRequest) (lineage, error) {
	lin := lineage{level: 1, source: req.Source}
	if lin.source == "" {
		lin.source = state.SourceUser
	}
	if pid := CallerTask(ctx, env, st, nil); pid != "" && state.ValidTaskID(pid) {
		if pt := st.Task(pid); pt != nil {
			lin = lineage{parent: pt.ID, level: pt.Level + 1, source: pt.ID}
			if req.MaxLevel > 0 && pt.Level >= req.MaxLevel {
				return lin, fault.Usagef("level-%d tasks cannot delegate (task %s is at the last level; max_level is %d in the config)", pt.Level, pt.ID, req.MaxLevel)
			}
		}
	}
	return lin, nil
}
