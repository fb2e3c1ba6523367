package group

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
)

// The rules `runner pick --by` chooses with.
const (
	ByCheck = "check" // done with a passing check, then fewest files, lines, tokens
	ByVote  = "vote"  // most votes among those done (and passing, with a check), a tie broken by the check rule
	BySpend = "spend" // done (and passing, with a check), then fewest tokens, lowest cost
)

// ErrNoCandidate is wrapped when no candidate of a group can be picked by
// the rule asked (none done, none passing, no vote won): exit 1.
var ErrNoCandidate = errors.New("no candidate to pick")

// Choose picks a candidate of c by rule (ByCheck, ByVote, BySpend), the
// same one for the same records every time: ties go to the candidate
// given first to --agents.
func Choose(c *Comparison, rule string) (string, error) {
	g := c.Group
	var pool []Row
	for _, r := range c.Rows {
		if r.Status == state.StatusDone && (g.Check == "" || r.Passed) {
			pool = append(pool, r)
		}
	}
	switch rule {
	case ByCheck, BySpend:
	case ByVote:
		if g.Ballot == nil {
			return "", fault.Usagef("group %s did not vote: run 'runner vote %s' first, or pick --by check", g.ID, g.ID)
		}
		if len(g.Ballot.Tally) == 0 {
			return "", fmt.Errorf("group %s: %s: %w", g.ID, g.Ballot.Note, ErrNoCandidate)
		}
		var voted []string
		for _, r := range c.Rows {
			if r.Votes > 0 {
				voted = append(voted, r.Task)
			}
		}
		pool = slices.DeleteFunc(pool, func(r Row) bool { return r.Votes == 0 })
		if len(pool) == 0 && len(voted) > 0 && g.Check != "" {
			return "", fmt.Errorf("group %s: no candidate with votes (%s) passed the check: pick --by check, or name one (see 'runner compare %s'): %w",
				g.ID, strings.Join(voted, ", "), g.ID, ErrNoCandidate)
		}
	default:
		return "", fault.Usagef("--by %q: give check, vote or spend", rule)
	}
	if len(pool) == 0 {
		what := "done"
		if g.Check != "" {
			what = "done with a passing check"
		}
		return "", fmt.Errorf("group %s: no candidate is %s (see 'runner compare %s'): %w", g.ID, what, g.ID, ErrNoCandidate)
	}
	sort.SliceStable(pool, func(i, j int) bool { return better(pool[i], pool[j], rule) })
	return pool[0].Task, nil
}

// better orders two eligible rows by rule.
func better(a, b Row, rule string) bool {
	if rule == ByVote && a.Votes != b.Votes {
		return a.Votes > b.Votes
	}
	if rule == BySpend {
		if a.Tokens != b.Tokens {
			return a.Tokens < b.Tokens
		}
		return a.CostUSD < b.CostUSD
	}
	if a.Files != b.Files {
		return a.Files < b.Files
	}
	if la, lb := a.Insertions+a.Deletions, b.Insertions+b.Deletions; la != lb {
		return la < lb
	}
	return a.Tokens < b.Tokens
}

// PickRequest is one `runner pick`.
type PickRequest struct {
	Group string
	// Task is the candidate to merge (an id or prefix); "" to choose By.
	Task, By string
	// Drop removes the other candidates' worktrees and branches (kept
	// until gc otherwise).
	Drop bool
	// Merge is how the pick merges (Ref is filled in).
	Merge worktree.MergeRequest
}

// Picked is what a pick did.
type Picked struct {
	Group   string   `json:"group"`
	Task    string   `json:"task"`
	By      string   `json:"by"`
	Closed  []string `json:"closed"`
	Dropped []string `json:"dropped"`
	Errors  []string `json:"errors,omitempty"`
	// Host is the host the picked candidate ran on ("" here), its work
	// brought back here in Bytes (a pack) before the merge.
	Host  string `json:"host,omitempty"`
	Bytes int    `json:"bytes,omitempty"`
}

// Pick merges one candidate of an ended group (worktree.Merge, with its
// refusals: a conflict, local changes) and ends the others: their
// windows closed, their worktrees and branches kept until gc unless Drop.
// A group still running, or picked already, is bad input and nothing
// changes.
func Pick(ctx context.Context, d Deps, req PickRequest) (*Picked, error) {
	c, err := Compare(ctx, d, req.Group)
	if err != nil {
		return nil, err
	}
	g := c.Group
	if err := pickable(g, c.Rows); err != nil {
		return nil, err
	}
	out := &Picked{Group: g.ID, By: req.By, Closed: []string{}, Dropped: []string{}}
	if req.Task != "" {
		t, err := member(ctx, d, g, req.Task)
		if err != nil {
			return nil, fault.Usagef("%v", err)
		}
		out.Task, out.By = t.ID, "hand"
	} else if out.Task, err = Choose(c, req.By); err != nil {
		return nil, err
	}
	if err := mergePicked(ctx, d, g, out, req.Merge); err != nil {
		return nil, err
	}
	if err := d.Store.UpdateGroup(ctx, g.ID, func(x *state.Group) error {
		x.Picked, x.PickedBy, x.PickedAt = out.Task, out.By, d.Now()
		return nil
	}); err != nil {
		return out, err
	}
	endOthers(ctx, d, g, out, req.Drop)
	return out, nil
}

// drop removes candidate t's worktree and branch, where it runs.
func drop(ctx context.Context, d Deps, t *state.Task) error {
	if t.Branch == "" || t.Origin == "" {
		return nil
	}
	gctx, err := on(ctx, d, t.Tmux.Host)
	if err != nil {
		return err
	}
	home, err := gitsnap.WorktreeHome(gctx, t.Origin)
	if err != nil {
		return err
	}
	if err := gitsnap.WorktreeRemove(gctx, t.Origin, filepath.Join(home, t.ID)); err != nil {
		return err
	}
	return gitsnap.DeleteBranch(gctx, t.Origin, t.Branch)
}

// mergePicked merges out.Task: here as `runner merge` does; a candidate
// on a host is first brought back here (bringBack) and merged into the
// repository here, the worktree made for it here removed after.
func mergePicked(ctx context.Context, d Deps, g *state.Group, out *Picked, m worktree.MergeRequest) error {
	m.Ref = out.Task
	t, err := d.Tasks.Task(ctx, out.Task)
	if err != nil {
		return err
	}
	if t.Tmux.Host == "" {
		if err := d.Merges.Merge(ctx, m); err != nil {
			return fmt.Errorf("group %s: merge %s: %w", g.ID, out.Task, err)
		}
		return nil
	}
	if !t.Status.IsTerminal() && t.Status != state.StatusOrphaned {
		return fault.Busyf("task %s is %s: its agent may still change the worktree (wait for it: runner wait %s)", t.ID, t.Status, t.ID)
	}
	b, err := bringBack(ctx, d, g, t)
	if err != nil {
		return fmt.Errorf("group %s: %w", g.ID, err)
	}
	out.Host, out.Bytes = t.Tmux.Host, b.Bytes
	if err := d.Merges.MergeHere(ctx, m, b.Task); err != nil {
		return fmt.Errorf("group %s: merge %s (brought back from host %s): %w", g.ID, out.Task, t.Tmux.Host, err)
	}
	if err := dropBroughtBack(context.WithoutCancel(ctx), b); err != nil {
		out.Errors = append(out.Errors, fmt.Sprintf("remove the worktree %s made here for the merge: %v", b.Task.Dir, err))
	}
	return nil
}

// pickable refuses a group that is still at work or was picked.
func pickable(g *state.Group, rows []Row) error {
	if g.Picked != "" {
		return fault.Usagef("group %s: %s was picked already (%s)", g.ID, g.Picked, g.PickedBy)
	}
	var running []string
	for _, r := range rows {
		if r.Error == "" && !Ended(&state.Task{Status: r.Status}) {
			running = append(running, r.Task)
		}
	}
	if len(running) > 0 || (g.Ended.IsZero() && g.Check != "") {
		return fault.Usagef("group %s is still running (%s): pick once every candidate has ended (see 'runner compare %s')",
			g.ID, strings.Join(running, ", "), g.ID)
	}
	return nil
}

// endOthers closes the other candidates' windows and, with drop, removes
// their worktrees and branches; what fails is said, not fatal.
func endOthers(ctx context.Context, d Deps, g *state.Group, out *Picked, dropToo bool) {
	for _, id := range g.Tasks {
		if id == out.Task {
			continue
		}
		if err := d.Tasks.Close(ctx, id); err != nil {
			out.Errors = append(out.Errors, fmt.Sprintf("close %s: %v", id, err))
		} else {
			out.Closed = append(out.Closed, id)
		}
		if !dropToo {
			continue
		}
		t, err := d.Tasks.Task(ctx, id)
		if err == nil {
			err = drop(ctx, d, t)
		}
		if err != nil {
			out.Errors = append(out.Errors, fmt.Sprintf("drop %s: %v", id, err))
		} else {
			out.Dropped = append(out.Dropped, id)
		}
	}
}
