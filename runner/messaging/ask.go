// Whom `runner ask` asks.

package messaging

import (
	"strings"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// The group targets of `runner ask`.
const (
	AskSiblings = "@siblings" // the calling task's siblings (same parent)
	AskAll      = "@all"      // every active task except the caller
)

// AskTargets turns ask's TARGET arguments into tasks, in argument
// order without duplicates: task ids or unique prefixes (any status),
// AskSiblings (the caller's active siblings: same parent), AskAll (every
// active task but the caller). The caller is never its own target. Any bad
// target is an ErrUsage error.
func AskTargets(st *state.State, caller string, refs []string) ([]*state.Task, error) {
	if len(refs) == 0 {
		return nil, fault.Usagef("ask: no target (give task ids, %s or %s)", AskSiblings, AskAll)
	}
	var out []*state.Task
	seen := map[string]bool{}
	add := func(t *state.Task) {
		if !seen[t.ID] && t.ID != caller {
			seen[t.ID] = true
			out = append(out, t)
		}
	}
	for _, ref := range refs {
		switch {
		case ref == AskSiblings:
			if caller == "" {
				return nil, fault.Usagef("ask %s: not inside a task (RUNNER_TASK_ID is not set): only an agent in a runner pane has siblings; give task ids or %s", AskSiblings, AskAll)
			}
			self := st.Task(caller)
			if self == nil {
				return nil, fault.Usagef("ask %s: the calling task %s (RUNNER_TASK_ID) is not in the state (pruned?); give task ids or %s", AskSiblings, caller, AskAll)
			}
			if self.Parent == "" {
				return nil, fault.Usagef("ask %s: task %s was not dispatched by another task, so it has no siblings; give task ids or %s", AskSiblings, caller, AskAll)
			}
			n := 0
			for _, t := range st.TaskList() {
				if t.Parent == self.Parent && t.ID != caller && t.Status.IsActive() {
					add(t)
					n++
				}
			}
			if n == 0 {
				return nil, fault.Usagef("ask %s: task %s has no active siblings (see 'runner tree %s')", AskSiblings, caller, self.Parent)
			}
		case ref == AskAll:
			n := 0
			for _, t := range st.TaskList() {
				if t.ID != caller && t.Status.IsActive() {
					add(t)
					n++
				}
			}
			if n == 0 {
				return nil, fault.Usagef("ask %s: no active task to ask (see 'runner ps')", AskAll)
			}
		case strings.HasPrefix(ref, "@"):
			return nil, fault.Usagef("ask: unknown target %q (use task ids, %s or %s)", ref, AskSiblings, AskAll)
		default:
			t, err := st.FindTask(ref)
			if err != nil {
				return nil, fault.Usagef("ask: %v (see 'runner ps --all')", err)
			}
			if t.ID == caller {
				return nil, fault.Usagef("ask: %s is the calling task; a task cannot ask itself", t.ID)
			}
			add(t)
		}
	}
	return out, nil
}
