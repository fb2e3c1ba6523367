package runner

import (
	"context"

	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/messaging"

	"github.com/runner-cli/runner/state"
)

// Tree returns the task hierarchy of the reconciled state: the subtree of
// root (an id or prefix), or every root task (see messaging.BuildTree).
func Tree(ctx context.Context, env *Env, root string) ([]*messaging.TreeNode, error) {
	st, err := Reconcile(ctx, env)
	if err != nil {
		return nil, err
	}
	return messaging.BuildTree(st, root)
}

// Collect gathers the outcomes of a task's children from the reconciled
// state (see messaging.CollectChildren).
func Collect(ctx context.Context, env *Env, parent string) (*messaging.Collection, error) {
	st, err := Reconcile(ctx, env)
	if err != nil {
		return nil, err
	}
	return messaging.CollectChildren(st, parent)
}

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
				return lin, exit.Usagef("level-%d tasks cannot delegate (task %s is at the last level; max_level is %d in the config)", pt.Level, pt.ID, req.MaxLevel)
			}
		}
	}
	return lin, nil
}
