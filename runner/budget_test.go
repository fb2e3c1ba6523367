package runner

import (
	"strings"
	"testing"

	"github.com/runner-cli/runner/state"
)

func TestOverBudget(t *testing.T) {
	mk := func(id, parent string, turns int) *state.Task {
		return &state.Task{ID: id, Parent: parent, TurnCount: turns}
	}
	st := state.New()
	for _, x := range []*state.Task{mk("t_rootaaaa", "", 2), mk("t_childaaa", "t_rootaaaa", 1), mk("t_grandaaa", "t_childaaa", 1), mk("t_otheraaa", "", 9)} {
		st.Tasks[x.ID] = x
	}
	for _, tc := range []struct {
		name   string
		id     string
		limits map[string]int
		want   string // a part of the reason; "" none
	}{
		{"no budget", "t_grandaaa", nil, ""},
		{"the root's counts its tree: 4 of 5", "t_grandaaa", map[string]int{"t_rootaaaa": 5}, ""},
		{"the root's counts its tree: 4 of 4", "t_grandaaa", map[string]int{"t_rootaaaa": 4}, "4 turn(s) delivered in the tree of task t_rootaaaa, its --max-turns 4"},
		{"a child's own counts its subtree", "t_grandaaa", map[string]int{"t_childaaa": 2}, "2 turn(s) delivered in the tree of task t_childaaa"},
		{"the task's own", "t_rootaaaa", map[string]int{"t_rootaaaa": 4}, "4 turn(s) delivered in task t_rootaaaa"},
		{"another tree is not counted", "t_rootaaaa", map[string]int{"t_rootaaaa": 5}, ""},
		{"a task's budget binds no task above it", "t_rootaaaa", map[string]int{"t_grandaaa": 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := overBudget(st, tc.id, func(x *state.Task) int { return tc.limits[x.ID] })
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("overBudget = %q, want %q", got, tc.want)
			}
			if got != "" && !strings.HasPrefix(got, "budget: ") {
				t.Errorf("the reason %q does not start with budget: ", got)
			}
		})
	}
}
