// Budgets: a task's turns, counted over its tree, stop it before a turn
// past its --max-turns is delivered.

package runner

import (
	"fmt"

	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/state"
)

// overBudget says why task id may not take one more turn (a reason
// starting exit.BudgetReason), or "": for the task and each task above it
// with a turn budget (maxTurns), the turns delivered to it and to the tasks
// under it (those in the index) must be fewer than the budget. A budget is
// thus never passed: the turn that would pass it is not delivered.
func overBudget(st *state.State, id string, maxTurns func(*state.Task) int) string {
	seen := map[string]bool{}
	for t := st.Task(id); t != nil && !seen[t.ID]; t = st.Task(t.Parent) {
		seen[t.ID] = true
		max := maxTurns(t)
		if max <= 0 {
			if t.Parent == "" {
				break
			}
			continue
		}
		if n := treeTurns(st, t.ID); n >= max {
			where := "task " + t.ID
			if t.ID != id {
				where = "the tree of task " + t.ID
			}
			return fmt.Sprintf("%s%d turn(s) delivered in %s, its --max-turns %d: no further turn", exit.BudgetReason, n, where, max)
		}
		if t.Parent == "" {
			break
		}
	}
	return ""
}

// treeTurns counts the turns delivered to task root and the tasks under it.
func treeTurns(st *state.State, root string) int {
	n := 0
	for _, t := range st.Tasks {
		for x, hops := t, 0; x != nil && hops <= len(st.Tasks); x, hops = st.Task(x.Parent), hops+1 {
			if x.ID == root {
				n += t.TurnCount
				break
			}
			if x.Parent == "" {
				break
			}
		}
	}
	return n
}

// maxTurnsOf is a task's turn budget from its recorded settings.
func maxTurnsOf(t *state.Task) int {
	set, err := SettingsOf(t)
	if err != nil {
		return 0
	}
	return set.MaxTurns
}
