// Package breadth bounds a tree of tasks in breadth, as max_level bounds
// it in depth: how many of its tasks live at once and how many children
// it dispatches in a minute (Check, with the config's Bounds), so that a
// loop of agents dispatching agents ends in a refusal (exit 2), not in a
// machine full of panes, supervisors and model turns.
package breadth

import (
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// Bounds bounds the breadth of a tree of tasks, as depth is bounded
// by MaxLevel: a dispatch loop of agents (each child dispatching more)
// would spend a pane, a supervisor and a model's turns per task. 0 is no
// bound.
type Bounds struct {
	MaxTasks  int // live tasks of the tree at once (config max_tree_tasks)
	PerMinute int // child dispatches of the tree in any minute (max_tree_dispatches_per_minute)
}

// Check refuses a child of parent (none: a root, never
// refused) when its tree holds b.MaxTasks live tasks already, or had
// b.PerMinute children dispatched in the minute before now. It runs in
// the update that records the task, so that a burst of dispatches cannot
// all pass one count.
func Check(s *state.State, parent string, b Bounds, now time.Time) error {
	if parent == "" || b.MaxTasks <= 0 && b.PerMinute <= 0 {
		return nil
	}
	root, live, recent := s.TreeBreadth(parent, now)
	if b.MaxTasks > 0 && live >= b.MaxTasks {
		return fault.Usagef("refused: the tree of task %s has %d live tasks (max_tree_tasks is %d in the config); wait for some to end", root, live, b.MaxTasks)
	}
	if b.PerMinute > 0 && recent >= b.PerMinute {
		return fault.Usagef("refused: the tree of task %s dispatched %d tasks in the last minute (max_tree_dispatches_per_minute is %d in the config); try again in a minute", root, recent, b.PerMinute)
	}
	return nil
}
