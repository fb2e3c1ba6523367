//go:build realagents

package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/mockapi"
)

// TestRealAgentsGroup runs one task through Claude Code, Codex and Gemini
// CLI as a group (dispatch --agents) in a folder none of them has seen,
// each answering differently and writing its own answer.txt through a
// shell tool call, with a check in each worktree and a vote: every
// candidate ends done with its check passed, compare --json has every
// field of each, and each candidate's shadow votes (the mock names the
// first other candidate its prompt lists).
func TestRealAgentsGroup(t *testing.T) {
	clis := []string{"claude", "codex", "gemini"}
	for _, cli := range clis {
		needCLI(t, cli)
	}
	home, project := mockapi.Home(t), agentTempDir(t)
	candidate := regexp.MustCompile(`(?m)^Candidate (t_[0-9a-z]+) `)
	vote := func(prompt string) string {
		if m := candidate.FindStringSubmatch(prompt); m != nil {
			return "VOTE: " + m[1] + "\nREASON: the mock likes the first one listed"
		}
		return "no candidate in the prompt"
	}
	var ct []cliTurns
	for _, cli := range clis {
		ct = append(ct, cliTurns{cli, []mockapi.Turn{
			{Match: `Reply with one line "VOTE:`, Reply: vote},
			{Match: "GROUP-TASK", Shell: "printf '%s\\n' " + cli + " > answer.txt", Text: "GROUP-ANSWER-" + strings.ToUpper(cli)},
		}})
	}
	h := newRealHarnessCLIs(t, ct, home, project, nil)
	out, errOut, code, took := h.run("dispatch", project, "--agents", strings.Join(clis, ","), "--permissions", "auto", "--yes-trust", "--approve-rule", "answer.txt",
		"--check", "test -s answer.txt", "--vote", "--json", "--timeout", "6m", "--ready-timeout", "3m", "please do the GROUP-TASK now")
	t.Logf("group of %v: exit %d in %s\nstderr:\n%s", clis, code, took.Round(100*time.Millisecond), errOut)
	var c struct {
		Group struct {
			ID     string
			Tasks  []string
			Ballot *struct {
				Ballots []struct{ Voter, For, Error string }
				Tally   map[string]int
				Note    string
			}
		}
		Candidates []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("dispatch --agents --json: %v\n%s", err, out)
	}
	if code != 0 || len(c.Candidates) != 3 {
		t.Errorf("exit %d, %d candidates, want 0 and 3\n%s", code, len(c.Candidates), out)
	}
	fields := []string{"task", "agent", "status", "answer", "check", "passed", "files", "insertions", "deletions", "paths",
		"tokens", "cost_usd", "wall_ms", "forecast", "same_files", "votes"}
	for i, row := range c.Candidates {
		for _, f := range fields {
			if _, ok := row[f]; !ok {
				t.Errorf("candidate %d: compare --json has no %q", i, f)
			}
		}
		agent, _ := row["agent"].(string)
		if row["status"] != "done" || row["passed"] != true || row["answer"] != "GROUP-ANSWER-"+strings.ToUpper(agent) || row["files"] != float64(1) {
			t.Errorf("candidate %s: %v", agent, row)
			logTask(t, h.status(fmt.Sprint(row["task"])))
		}
	}
	if c.Group.Ballot == nil {
		t.Fatalf("no vote recorded: %s", out)
	}
	votes := 0
	for _, b := range c.Group.Ballot.Ballots {
		if b.For == "" {
			t.Errorf("ballot of %s: %s", b.Voter, b.Error)
		}
	}
	for _, n := range c.Group.Ballot.Tally {
		votes += n
	}
	if votes != 3 {
		t.Errorf("tally %v (%s), want 3 votes", c.Group.Ballot.Tally, c.Group.Ballot.Note)
	}
	cmp, _, code, _ := h.run("compare", c.Group.ID)
	t.Logf("runner compare %s (exit %d):\n%s", c.Group.ID, code, cmp)
}
