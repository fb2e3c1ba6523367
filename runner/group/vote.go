package group

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// VoteTimeout bounds one candidate's ballot (its shadow).
const VoteTimeout = 5 * time.Minute

// Bounds of what a ballot's prompt shows of each other candidate.
const (
	voteAnswerMax = 1500
	voteDiffMax   = 3000
)

// Vote asks each candidate of g that ended done (through a shadow of it:
// its own conversation is untouched) which other candidate did the task
// best, shown their answers, checks and diffs, and counts the ballots.
// A candidate on a host votes there (its shadow runs in its folder
// there, ask.Run). A candidate that cannot vote (it failed, its agent has no headless
// mode, its shadow failed or named no other candidate) has a ballot with
// the Error saying why. The winner has the most votes; a tie names the
// tied and has no winner.
func Vote(ctx context.Context, d Deps, g *state.Group, tasks map[string]*state.Task) (*state.VoteResult, error) {
	res := &state.VoteResult{Tally: map[string]int{}, Time: d.Now()}
	var voters []string
	for _, id := range g.Tasks {
		t := tasks[id]
		switch {
		case t == nil:
			res.Ballots = append(res.Ballots, state.Ballot{Voter: id, Error: "no record"})
		case t.Status != state.StatusDone:
			res.Ballots = append(res.Ballots, state.Ballot{Voter: id, Agent: t.Agent, Error: "it ended " + string(t.Status) + ": no vote"})
		default:
			voters = append(voters, id)
		}
	}
	if len(g.Tasks) < 2 {
		res.Note = "one candidate: nothing to vote on"
		return res, nil
	}
	prompts := map[string]string{}
	var asked []string
	for _, id := range voters {
		if len(voters) < 2 {
			res.Ballots = append(res.Ballots, state.Ballot{Voter: id, Agent: tasks[id].Agent, Error: "no other candidate ended done"})
			continue
		}
		prompts[id] = ballotPrompt(ctx, d, g, tasks, id)
		asked = append(asked, id)
	}
	voters = asked
	var err error
	if len(voters) > 0 {
		var answers []ask.Answer
		answers, err = d.Ask(ctx, ask.Request{Targets: voters, Question: "vote", Quiet: true, Timeout: VoteTimeout,
			PromptFor: func(t *state.Task) string { return prompts[t.ID] }})
		for _, a := range answers {
			res.Ballots = append(res.Ballots, readBallot(g, tasks, a))
		}
	}
	tally(res, g)
	return res, err
}

// readBallot reads one shadow's answer as a ballot.
func readBallot(g *state.Group, tasks map[string]*state.Task, a ask.Answer) state.Ballot {
	b := state.Ballot{Voter: a.Task, Agent: a.Agent}
	if !a.OK() {
		b.Error = a.Error
		return b
	}
	choice, reason := readVote(a.Answer)
	if choice == "" {
		b.Error = "its answer names no candidate (no VOTE: line of its own): " + textutil.Headline(a.Answer, 120)
		return b
	}
	switch {
	case choice == a.Task:
		b.Error = "it voted for itself"
	case !contains(g.Tasks, choice):
		b.Error = "it voted for " + choice + ", not a candidate"
	case tasks[choice] == nil || tasks[choice].Status != state.StatusDone:
		b.Error = "it voted for " + choice + ", a candidate that did not end done"
	default:
		b.For = choice
	}
	if reason != "" {
		b.Reason = textutil.Headline(reason, 300)
	}
	return b
}

// tally counts the ballots and names the winner or the tie.
func tally(res *state.VoteResult, g *state.Group) {
	votes := 0
	for _, b := range res.Ballots {
		if b.For != "" {
			res.Tally[b.For]++
			votes++
		}
	}
	sort.SliceStable(res.Ballots, func(i, j int) bool {
		return indexOf(g.Tasks, res.Ballots[i].Voter) < indexOf(g.Tasks, res.Ballots[j].Voter)
	})
	if votes == 0 {
		res.Note = "no candidate could vote"
		return
	}
	best := 0
	for _, n := range res.Tally {
		best = max(best, n)
	}
	var top []string
	for _, id := range g.Tasks {
		if res.Tally[id] == best {
			top = append(top, id)
		}
	}
	if len(top) > 1 {
		res.Tie = top
		res.Note = fmt.Sprintf("a tie: %s have %d vote(s) each", strings.Join(top, ", "), best)
		return
	}
	res.Winner = top[0]
	res.Note = fmt.Sprintf("%s wins with %d of %d vote(s)", top[0], best, votes)
}

// ballotPrompt is what candidate voter's shadow is asked: every other
// candidate that ended done, its answer, check and diff, each line quoted
// with "| " (quote).
func ballotPrompt(ctx context.Context, d Deps, g *state.Group, tasks map[string]*state.Task, voter string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are a shadow of agent %s, one of %d agents that each did the same task in a copy of the repository of its own.\n", voter, len(g.Tasks))
	fmt.Fprintf(&b, "Your own candidate is %s. Judge the others: which did the task best? Do not change any file.\n\nThe task:\n%s\n",
		voter, quote(textutil.ClipBytes(g.Text, 1000)))
	for _, id := range g.Tasks {
		t := tasks[id]
		if id == voter || t == nil || t.Status != state.StatusDone {
			continue
		}
		check := "none"
		if g.Check != "" {
			check = CheckSummary(t.Check)
			if t.Check.Passed() {
				check = "passed"
			}
		}
		fmt.Fprintf(&b, "\nCandidate %s (agent %s): status %s; check %s\n", id, t.Agent, t.Status, check)
		b.WriteString("Its answer:\n" + quote(textutil.ClipBytes(strings.TrimSpace(t.Answer), voteAnswerMax)) + "\n")
		if diff, err := candidateDiff(ctx, d, t); err == nil && diff != "" {
			b.WriteString("Its changes:\n" + quote(textutil.ClipBytes(diff, voteDiffMax)) + "\n")
		}
	}
	others := make([]string, 0, len(g.Tasks))
	for _, id := range g.Tasks {
		if id != voter && tasks[id] != nil && tasks[id].Status == state.StatusDone {
			others = append(others, id)
		}
	}
	fmt.Fprintf(&b, "\nReply with one line \"VOTE: <candidate id>\" naming the best of %s (not your own), then one line \"REASON: <why, in one sentence>\".\n",
		strings.Join(others, ", "))
	return b.String()
}

// quote quotes text shown to a voter: every line (textutil.Lines: CR, VT,
// FF, NEL and the Unicode separators end one too, as they may for the
// model that reads it) starts with "| ", and readVote reads no such line.
func quote(s string) string {
	if strings.TrimSpace(s) == "" {
		return "| (nothing)"
	}
	lines := textutil.Lines(strings.TrimRight(s, "\n"))
	for i, l := range lines {
		lines[i] = "| " + l
	}
	return strings.Join(lines, "\n")
}

func contains(list []string, s string) bool { return indexOf(list, s) < len(list) }

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return len(list)
}

// VoteOn holds (again) the vote of group ref, whose candidates must all
// have ended, and records it on the group.
func VoteOn(ctx context.Context, d Deps, ref string) (*state.Group, error) {
	g, err := d.Store.FindGroup(ctx, ref)
	if err != nil {
		return nil, err
	}
	if _, err := d.Tasks.Reconcile(ctx); err != nil {
		return nil, err
	}
	tasks := map[string]*state.Task{}
	var running []string
	for _, id := range g.Tasks {
		t, err := d.Tasks.Task(ctx, id)
		if err != nil {
			return nil, err
		}
		tasks[id] = t
		if !Ended(t) {
			running = append(running, id)
		}
	}
	if len(running) > 0 {
		return nil, fault.Usagef("group %s: %s still at work: vote once every candidate has ended", g.ID, strings.Join(running, ", "))
	}
	res, verr := Vote(ctx, d, g, tasks)
	var out *state.Group
	err = d.Store.UpdateGroup(ctx, g.ID, func(x *state.Group) error {
		x.Ballot = res
		c := *x
		out = &c
		return nil
	})
	if err != nil {
		return nil, err
	}
	if verr != nil && len(res.Tally) == 0 {
		return out, verr
	}
	return out, nil
}
