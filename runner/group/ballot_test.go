package group

import (
	"errors"
	"strings"
	"testing"

	"github.com/runner-cli/runner/state"
)

// TestPickByVotePassingOnly: pick --by vote chooses among the candidates
// whose check passed, however many votes one that failed it has; when
// every candidate with votes failed it, nothing is picked and the error
// says so (ErrNoCandidate: exit 1).
func TestPickByVotePassingOnly(t *testing.T) {
	pass, fail := &state.CheckResult{Exit: 0}, &state.CheckResult{Exit: 1}
	rows := []Row{
		{Task: "t_a", Status: state.StatusDone, Check: fail, Votes: 3},
		{Task: "t_b", Status: state.StatusDone, Check: pass, Passed: true, Votes: 1},
		{Task: "t_c", Status: state.StatusDone, Check: pass, Passed: true},
	}
	g := &state.Group{ID: "g_v", Check: "make test", Tasks: []string{"t_a", "t_b", "t_c"},
		Ballot: &state.VoteResult{Tally: map[string]int{"t_a": 3, "t_b": 1}, Winner: "t_a"}}
	if got, err := Choose(&Comparison{Group: g, Rows: rows}, ByVote); err != nil || got != "t_b" {
		t.Errorf("Choose(vote) = %q, %v; want t_b (t_a's check failed)", got, err)
	}
	g.Ballot = &state.VoteResult{Tally: map[string]int{"t_a": 3}, Winner: "t_a"}
	rows[1].Votes = 0
	got, err := Choose(&Comparison{Group: g, Rows: rows}, ByVote)
	if !errors.Is(err, ErrNoCandidate) || !strings.Contains(err.Error(), "no candidate with votes (t_a) passed the check") {
		t.Errorf("Choose(vote) with votes for a failed check only = %q, %v; want ErrNoCandidate saying so", got, err)
	}
	// Without a check, the votes alone.
	g.Check = ""
	if got, err := Choose(&Comparison{Group: g, Rows: rows}, ByVote); err != nil || got != "t_a" {
		t.Errorf("Choose(vote) without a check = %q, %v; want t_a", got, err)
	}
}
