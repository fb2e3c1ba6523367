package budget

import (
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

func TestOverBudget(t *testing.T) {
	mk := func(id, parent string, turns int, in, out int64, cost float64) *state.Task {
		sp := state.Spend{Input: in, Output: out, CostUSD: cost, Turns: turns}
		if cost > 0 {
			sp.Costed = turns
		}
		return &state.Task{ID: id, Parent: parent, TurnCount: turns, Spend: sp}
	}
	st := state.New()
	for _, x := range []*state.Task{
		mk("t_rootaaaa", "", 2, 1000, 100, 0.5),
		mk("t_childaaa", "t_rootaaaa", 1, 500, 50, 0.25),
		mk("t_grandaaa", "t_childaaa", 1, 200, 20, 0),
		mk("t_otheraaa", "", 9, 90000, 9000, 9),
	} {
		st.Tasks[x.ID] = x
	}
	for _, tc := range []struct {
		name      string
		id        string
		limits    map[string]settings.Budget
		atTurnEnd bool
		want      string // a part of the reason; "" none
		root      string
	}{
		{"no budget", "t_grandaaa", nil, false, "", ""},
		{"the root's counts its tree: 4 of 5", "t_grandaaa", map[string]settings.Budget{"t_rootaaaa": {Turns: 5}}, false, "", ""},
		{"the root's counts its tree: 4 of 4", "t_grandaaa", map[string]settings.Budget{"t_rootaaaa": {Turns: 4}}, false, "4 turn(s) delivered in the tree of task t_rootaaaa, its --max-turns 4", "t_rootaaaa"},
		{"a child's own counts its subtree", "t_grandaaa", map[string]settings.Budget{"t_childaaa": {Turns: 2}}, false, "2 turn(s) delivered in the tree of task t_childaaa", "t_childaaa"},
		{"the task's own", "t_rootaaaa", map[string]settings.Budget{"t_rootaaaa": {Turns: 4}}, false, "4 turn(s) delivered in task t_rootaaaa", "t_rootaaaa"},
		{"another tree is not counted", "t_rootaaaa", map[string]settings.Budget{"t_rootaaaa": {Turns: 5}}, false, "", ""},
		{"a task's budget binds no task above it", "t_rootaaaa", map[string]settings.Budget{"t_grandaaa": {Turns: 1}}, false, "", ""},
		{"turns are not counted at a turn's end", "t_rootaaaa", map[string]settings.Budget{"t_rootaaaa": {Turns: 4}}, true, "", ""},
		{"tokens over the tree: 1870 of 2000", "t_grandaaa", map[string]settings.Budget{"t_rootaaaa": {Tokens: 2000}}, true, "", ""},
		{"tokens over the tree: 1870 of 1800", "t_grandaaa", map[string]settings.Budget{"t_rootaaaa": {Tokens: 1800}}, true,
			"1870 token(s) used in the tree of task t_rootaaaa, its --budget-tokens 1800, over by 70 token(s): no further turn", "t_rootaaaa"},
		{"tokens reached exactly", "t_childaaa", map[string]settings.Budget{"t_childaaa": {Tokens: 770}}, false,
			"770 token(s) used in task t_childaaa, its --budget-tokens 770: no further turn", "t_childaaa"},
		{"dollars over the tree", "t_childaaa", map[string]settings.Budget{"t_rootaaaa": {USD: 0.7}}, true,
			"$0.7500 used in the tree of task t_rootaaaa, its --budget-usd 0.7, over by $0.0500", "t_rootaaaa"},
		{"dollars under", "t_childaaa", map[string]settings.Budget{"t_rootaaaa": {USD: 1}}, true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, root := Over(st, tc.id, func(x *state.Task) settings.Budget { return tc.limits[x.ID] }, tc.atTurnEnd)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("overBudget = %q, want %q", got, tc.want)
			}
			if root != tc.root {
				t.Errorf("the budget's task is %q, want %q", root, tc.root)
			}
			if got != "" && !strings.HasPrefix(got, "budget: ") {
				t.Errorf("the reason %q does not start with budget: ", got)
			}
		})
	}
	st.Tasks["t_childaaa"].Status = state.StatusRunning
	st.Tasks["t_grandaaa"].Status = state.StatusNeedsInput
	st.Tasks["t_otheraaa"].Status = state.StatusRunning
	live := LiveInTree(st, "t_rootaaaa", "t_grandaaa")
	if len(live) != 0 {
		t.Errorf("liveInTree without a budget passed = %v", live)
	}
	st.Tasks["t_rootaaaa"].Settings = []byte(`{"budget_tokens":1000}`)
	live = LiveInTree(st, "t_rootaaaa", "t_grandaaa")
	if len(live) != 1 || live[0].Task.ID != "t_childaaa" || !strings.Contains(live[0].Reason, "in the tree of task t_rootaaaa") {
		t.Errorf("liveInTree = %v, want t_childaaa alone", live)
	}
}

// TestTreeWalkEndsOnALoop: tasks whose parents make a loop (a damaged
// index) end the walks up the tree: TreeTurns counts the tree's tasks once
// each, and LiveInTree finishes.
func TestTreeWalkEndsOnALoop(t *testing.T) {
	st := state.New()
	for _, x := range []*state.Task{
		{ID: "t_loopaaaa", Parent: "t_loopbbbb", TurnCount: 1, Status: state.StatusRunning},
		{ID: "t_loopbbbb", Parent: "t_loopaaaa", TurnCount: 2, Status: state.StatusRunning},
		{ID: "t_rootaaaa", TurnCount: 4},
		{ID: "t_childaaa", Parent: "t_rootaaaa", TurnCount: 3, Status: state.StatusRunning},
	} {
		st.Tasks[x.ID] = x
	}
	if n := TreeTurns(st, "t_rootaaaa"); n != 7 {
		t.Errorf("TreeTurns(root) = %d, want 7 (the loop's tasks are not under it)", n)
	}
	if n := TreeTurns(st, "t_loopaaaa"); n != 3 {
		t.Errorf("TreeTurns(a task of the loop) = %d, want 3", n)
	}
	if stops := LiveInTree(st, "t_rootaaaa", ""); len(stops) != 0 {
		t.Errorf("LiveInTree with no budget passed = %v, want none", stops)
	}
}
