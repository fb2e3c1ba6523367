package group

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/state"
)

// TestChoose: each --by rule's order, the same every time, ties to the
// candidate given first; nothing eligible is ErrNoCandidate.
func TestChoose(t *testing.T) {
	pass := &state.CheckResult{Exit: 0}
	fail := &state.CheckResult{Exit: 1}
	rows := []Row{
		{Task: "t_a", Status: state.StatusDone, Check: fail, Files: 1, Tokens: 10},
		{Task: "t_b", Status: state.StatusDone, Check: pass, Passed: true, Files: 3, Insertions: 5, Tokens: 100},
		{Task: "t_c", Status: state.StatusDone, Check: pass, Passed: true, Files: 2, Insertions: 50, Tokens: 900, Votes: 1},
		{Task: "t_d", Status: state.StatusFailed, Files: 0, Tokens: 1, Votes: 5},
		{Task: "t_e", Status: state.StatusDone, Check: pass, Passed: true, Files: 2, Insertions: 50, Tokens: 900, Votes: 1},
	}
	g := &state.Group{ID: "g_x", Check: "make test", Tasks: []string{"t_a", "t_b", "t_c", "t_d", "t_e"},
		Ballot: &state.VoteResult{Tally: map[string]int{"t_c": 1, "t_e": 1, "t_d": 5}}}
	c := &Comparison{Group: g, Rows: rows}
	for rule, want := range map[string]string{ByCheck: "t_c", BySpend: "t_b", ByVote: "t_c"} {
		for range 3 {
			if got, err := Choose(c, rule); err != nil || got != want {
				t.Errorf("Choose(%s) = %q, %v; want %s", rule, got, err, want)
			}
		}
	}
	// Without a check, done is enough: fewest files wins.
	nocheck := &Comparison{Group: &state.Group{ID: "g_y", Tasks: g.Tasks}, Rows: rows}
	if got, _ := Choose(nocheck, ByCheck); got != "t_a" {
		t.Errorf("Choose without a check = %q, want t_a", got)
	}
	none := &Comparison{Group: g, Rows: []Row{rows[0], rows[3]}}
	if _, err := Choose(none, ByCheck); !isNoCandidate(err) {
		t.Errorf("nothing passing: %v", err)
	}
	unvoted := &Comparison{Group: &state.Group{ID: "g_z", Tasks: g.Tasks}, Rows: rows}
	if _, err := Choose(unvoted, ByVote); err == nil || !strings.Contains(err.Error(), "did not vote") {
		t.Errorf("--by vote without a vote: %v", err)
	}
	if _, err := Choose(c, "luck"); err == nil {
		t.Error("an unknown rule chose")
	}
}

func isNoCandidate(err error) bool {
	return err != nil && strings.Contains(err.Error(), ErrNoCandidate.Error())
}

// TestTally: ballots read from the shadows' answers (a vote for itself or
// for no candidate is no vote), a winner, a tie, nobody.
func TestTally(t *testing.T) {
	g := &state.Group{Tasks: []string{"t_a", "t_b", "t_c", "t_x"}}
	tasks := map[string]*state.Task{"t_a": {Status: state.StatusDone}, "t_b": {Status: state.StatusDone}, "t_c": {Status: state.StatusDone}, "t_x": {Status: state.StatusFailed}}
	ans := func(task, text string) ask.Answer { return ask.Answer{Task: task, Agent: "x", Answer: text} }
	for _, tc := range []struct {
		name    string
		answers []ask.Answer
		winner  string
		tie     int
	}{
		{"winner", []ask.Answer{ans("t_a", "VOTE: t_b\nREASON: tests"), ans("t_b", "**VOTE:** t_c"), ans("t_c", "vote: T_B")}, "t_b", 0},
		{"tie", []ask.Answer{ans("t_a", "VOTE: t_b"), ans("t_b", "VOTE: t_a"), ans("t_c", "I like them all")}, "", 2},
		{"self, stranger, failed", []ask.Answer{ans("t_a", "VOTE: t_a"), ans("t_b", "VOTE: t_zzz"), ans("t_c", "VOTE: t_x"), {Task: "t_c", Error: "no headless mode"}}, "", 0},
	} {
		res := &state.VoteResult{Tally: map[string]int{}}
		for _, a := range tc.answers {
			res.Ballots = append(res.Ballots, readBallot(g, tasks, a))
		}
		tally(res, g)
		if res.Winner != tc.winner || len(res.Tie) != tc.tie || res.Note == "" {
			t.Errorf("%s: %+v", tc.name, res)
		}
	}
	b := readBallot(g, tasks, ans("t_a", "VOTE: t_b\nREASON:  it has tests  "))
	if b.For != "t_b" || b.Reason != "it has tests" || b.Error != "" {
		t.Errorf("ballot %+v", b)
	}
}

// TestRunCheck: the exit code, the output's tail, a check killed at its
// timeout with its children, one that cannot start.
func TestRunCheck(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	if r := RunCheck(ctx, dir, "echo out; echo err >&2; exit 3", time.Minute, nil); r.Exit != 3 || r.Passed() || !strings.Contains(r.Tail, "out\nerr") {
		t.Errorf("exit 3: %+v", r)
	}
	if r := RunCheck(ctx, dir, "seq 1 5000", time.Minute, nil); !r.Passed() || len(r.Tail) > CheckTail || !strings.HasSuffix(r.Tail, "5000") {
		t.Errorf("a long output: exit %d, tail of %d bytes ending %q", r.Exit, len(r.Tail), r.Tail[max(0, len(r.Tail)-10):])
	}
	r := RunCheck(ctx, dir, "sleep 30 & sleep 30", 300*time.Millisecond, nil)
	if !r.TimedOut || r.Exit != -1 || r.Passed() || !strings.Contains(r.Tail, "killed") {
		t.Errorf("a check past its timeout: %+v", r)
	}
	wrapErr := func([]string) ([]string, error) { return nil, context.DeadlineExceeded }
	if r := RunCheck(ctx, dir, "true", time.Minute, wrapErr); r.Exit != -1 || !strings.Contains(r.Tail, "sandbox") {
		t.Errorf("a sandbox that cannot be made: %+v", r)
	}
	if s := CheckSummary(&state.CheckResult{Exit: 2, Duration: time.Second}); s != "failed: exit 2 (1s)" {
		t.Errorf("summary %q", s)
	}
}

func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "gitsnap", "internal/clock", "internal/subproc", "internal/textutil", "internal/transport", "runner/ask", "runner/fault", "runner/hosts", "runner/plan", "runner/proctree", "runner/profile", "runner/projects", "runner/worktree", "state")
}
