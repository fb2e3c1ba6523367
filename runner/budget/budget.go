// Package budget holds the rules of a task's budgets: its turns, tokens
// and dollars, counted over its tree (its children count toward it), stop
// it at its --max-turns, --budget-tokens or --budget-usd (Over, TreeTurns;
// LiveInTree: what a passed one stops; CheckAgent: a budget the agent's
// CLI cannot be held to). Pure: it reads the state it is given and
// decides; what a passed budget stops, runner stops.
package budget

import (
	"fmt"
	"strconv"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

// Over says why task id may take no further turn (a reason starting
// fault.BudgetReason), or "": for the task and each task above it with a
// budget (budgetOf), what it and the tasks under it used must stay under
// it. Turns are counted before a turn is delivered (the turn that would
// pass --max-turns is not), tokens and dollars as each turn ends (a turn
// that reaches the budget ends the tree's work: it may pass it by that
// turn's spend, which the reason gives); atTurnEnd leaves turns out. root
// is the task whose budget it is.
func Over(st *state.State, id string, budgetOf func(*state.Task) settings.Budget, atTurnEnd bool) (why, root string) {
	tasks := st.TaskList()
	eachAbove(st, id, func(t *state.Task) bool {
		b := budgetOf(t)
		where := "task " + t.ID
		if t.ID != id {
			where = "the tree of task " + t.ID
		}
		if b.Turns > 0 && !atTurnEnd {
			if n := TreeTurns(st, t.ID); n >= b.Turns {
				why, root = fmt.Sprintf("%s%d turn(s) delivered in %s, its --max-turns %d: no further turn", fault.BudgetReason, n, where, b.Turns), t.ID
				return false
			}
		}
		if b.Tokens > 0 || b.USD > 0 {
			for _, x := range state.InTree(tasks, t.ID) {
				st.Task(x.ID) // whole: its turn's live spend is in its record
			}
			spent, _ := state.TreeSpend(tasks, t.ID)
			if b.Tokens > 0 && spent.Tokens() >= b.Tokens {
				why, root = fmt.Sprintf("%s%s token(s) used in %s, its --budget-tokens %s%s: no further turn", fault.BudgetReason,
					strconv.FormatInt(spent.Tokens(), 10), where, strconv.FormatInt(b.Tokens, 10), overBy(float64(spent.Tokens()-b.Tokens), "%.0f token(s)")), t.ID
				return false
			}
			if b.USD > 0 && spent.CostUSD >= b.USD {
				why, root = fmt.Sprintf("%s$%.4f used in %s, its --budget-usd %s%s: no further turn", fault.BudgetReason,
					spent.CostUSD, where, strconv.FormatFloat(b.USD, 'f', -1, 64), overBy(spent.CostUSD-b.USD, "$%.4f")), t.ID
				return false
			}
		}
		return true
	})
	return why, root
}

// eachAbove calls fn with task id and each task above it (its parent,
// theirs, …), until fn returns false; a loop of parents ends it.
func eachAbove(st *state.State, id string, fn func(*state.Task) bool) {
	seen := map[string]bool{}
	for t := st.Task(id); t != nil && !seen[t.ID] && fn(t); t = st.Task(t.Parent) {
		seen[t.ID] = true
		if t.Parent == "" {
			return
		}
	}
}

// overBy is ", over by X" for a positive excess, "" for none.
func overBy(excess float64, format string) string {
	if excess <= 0 {
		return ""
	}
	return ", over by " + fmt.Sprintf(format, excess)
}

// TreeTurns counts the turns delivered to task root and the tasks under it.
// On a state an index-only update loaded (state.Store.UpdateIndex), which
// task is under root is read from the index (each task's parent), and
// only the records of the tree's tasks are read, for their turn counts:
// the cost does not grow with the other tasks the index carries.
func TreeTurns(st *state.State, root string) int {
	n := 0
	for id, t := range st.Tasks {
		if inTree(st, t, root) {
			n += st.Task(id).TurnCount
		}
	}
	return n
}

// inTree reports whether t is root or under it, following parents by the
// index's fields (a parent the index no longer has is read from the
// archive); a loop of parents ends the walk.
func inTree(st *state.State, t *state.Task, root string) bool {
	for x, hops := t, 0; x != nil && hops <= len(st.Tasks); hops++ {
		if x.ID == root {
			return true
		}
		if x.Parent == "" {
			return false
		}
		p, ok := st.Tasks[x.Parent]
		if !ok {
			p = st.Task(x.Parent)
		}
		x = p
	}
	return false
}

// Stop is a task a passed budget ends, and why, in its own terms.
type Stop struct {
	Task   *state.Task
	Reason string
}

// LiveInTree lists the tasks under root (root too) but skip whose agent
// works on a turn (running, needs_input), with the reason the budget
// stops each: what a budget passed stops.
func LiveInTree(st *state.State, root, skip string) []Stop {
	var out []Stop
	for _, t := range st.Tasks {
		if t.ID == skip || (t.Status != state.StatusRunning && t.Status != state.StatusNeedsInput) || !inTree(st, t, root) {
			continue
		}
		if why, _ := Over(st, t.ID, settings.BudgetOf, true); why != "" {
			out = append(out, Stop{st.Task(t.ID), why})
		}
	}
	return out
}

// CheckAgent refuses a budget the agent's CLI cannot be held to: a
// token budget for a CLI whose record of a turn's tokens runner does not
// read, a dollar budget for one that reports no cost (exit 2).
func CheckAgent(b settings.Budget, prof *profile.Profile) error {
	if b.Tokens > 0 && prof.Spend == "" {
		return fault.Usagef("--budget-tokens: agent %s keeps no record of a turn's tokens runner reads (runner agents explain %s): use --max-turns", prof.Name, prof.Name)
	}
	if b.USD > 0 && !prof.SpendCost {
		return fault.Usagef("--budget-usd: agent %s does not report what a turn costs (only OpenCode, pi and the sim do): use --budget-tokens or --max-turns", prof.Name)
	}
	return nil
}
