package supervisor

import (
	"context"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// TestLessEarlierTurns: for a CLI whose record gives the session's total
// alone (Droid's), a turn's spend is that total less what the task's
// ended turns used; unknown when one of them is unknown or not read yet,
// or when the total is less than theirs (a new session).
func TestLessEarlierTurns(t *testing.T) {
	total := profile.Usage{Input: 3000, Output: 300, Cached: 900}
	for _, c := range []struct {
		name   string
		task   state.Task
		want   profile.Usage
		wantOK bool
	}{
		{"first turn", state.Task{}, total, true},
		{"after one", state.Task{Spend: state.Spend{Input: 1000, Output: 100, Cached: 400, Turns: 1}},
			profile.Usage{Input: 2000, Output: 200, Cached: 500}, true},
		{"an earlier turn unknown", state.Task{Spend: state.Spend{Input: 1000, Turns: 1, Unknown: 1}}, profile.Usage{}, false},
		{"an earlier turn not read yet", state.Task{Turns: []state.Turn{{SpendPending: true}}}, profile.Usage{}, false},
		{"a new session", state.Task{Spend: state.Spend{Input: 5000, Turns: 2}}, profile.Usage{}, false},
	} {
		s := &Supervisor{Book: &book{task: c.task}}
		got, ok := s.lessEarlierTurns(context.Background(), total)
		if ok != c.wantOK || got != c.want {
			t.Errorf("%s: got %+v ok %v, want %+v ok %v", c.name, got, ok, c.want, c.wantOK)
		}
	}
}
