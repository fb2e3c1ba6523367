package worktree

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
)

// MergedTask is one task merge --all merged.
type MergedTask struct {
	Task  string               `json:"task"`
	Merge *gitsnap.MergeResult `json:"merge"`
}

// LeftTask is one unmerged task branch merge --all left, and why.
type LeftTask struct {
	Task   string   `json:"task"`
	Branch string   `json:"branch"`
	Reason string   `json:"reason"`
	Files  []string `json:"files,omitempty"` // the conflicting files, when a conflict is why
}

// MergeAllResult is what merge --all did.
type MergeAllResult struct {
	Merged []MergedTask `json:"merged"`
	Left   []LeftTask   `json:"left"`
	// Stopped is the task it stopped at ("" when it merged every done
	// task it found), and StopErr why (a conflict: exit 1).
	Stopped string `json:"stopped,omitempty"`
	StopErr error  `json:"-"`
}

// candidate is a done, unmerged task branch merge --all may merge.
type candidate struct {
	task     *state.Task
	forecast gitsnap.BranchForecast
}

// MergeAll merges the unmerged branches of the done worktree tasks of
// every repository, one after another as Merge does (req.Ref unused), in
// an order that avoids the conflicts the forecast can avoid: first those
// that merge cleanly, no two that conflict with each other; then the rest.
// It stops at the first merge that fails (a conflict is aborted: nothing
// of the user's changed) and reports what it merged and what it left.
// Unmerged branches of tasks that are not done are left, named.
func MergeAll(ctx context.Context, d Deps, req MergeRequest) (*MergeAllResult, error) {
	groups, left, err := mergeCandidates(ctx, d, req.Into)
	if err != nil {
		return nil, err
	}
	res := &MergeAllResult{Merged: []MergedTask{}, Left: left}
	var order []candidate
	for _, g := range groups {
		order = append(order, mergeOrder(g)...)
	}
	for i, c := range order {
		one := req
		one.Ref = c.task.ID
		_, m, err := Merge(ctx, d, one)
		if err == nil {
			res.Merged = append(res.Merged, MergedTask{Task: c.task.ID, Merge: m})
			continue
		}
		res.Stopped, res.StopErr = c.task.ID, err
		l := LeftTask{Task: c.task.ID, Branch: c.task.Branch, Reason: err.Error()}
		var ce *gitsnap.ConflictError
		if errors.As(err, &ce) {
			l.Files = ce.Files
		}
		res.Left = append(res.Left, l)
		for _, rest := range order[i+1:] {
			res.Left = append(res.Left, LeftTask{Task: rest.task.ID, Branch: rest.task.Branch,
				Reason: fmt.Sprintf("not tried: merge --all stopped at %s", c.task.ID)})
		}
		break
	}
	return res, nil
}

// mergeCandidates finds the unmerged task branches of every repository
// (grouped by repository, forecast into into) and splits them into the
// done ones, which merge --all may merge, and the others, left.
func mergeCandidates(ctx context.Context, d Deps, into string) ([][]candidate, []LeftTask, error) {
	st, err := d.Reconcile(ctx)
	if err != nil {
		return nil, nil, err
	}
	all, err := st.AllTasks()
	if err != nil {
		return nil, nil, err
	}
	byRepo := map[projects.Place][]*state.Task{}
	for _, t := range all {
		if t.Branch == "" {
			continue
		}
		if full := st.Task(t.ID); full != nil && full.Origin != "" {
			at := projects.Place{Dir: full.Origin, Host: full.Tmux.Host}
			byRepo[at] = append(byRepo[at], full)
		}
	}
	left := []LeftTask{}
	var groups [][]candidate
	places := slices.SortedFunc(maps.Keys(byRepo), func(a, b projects.Place) int {
		return strings.Compare(a.Host+"\x00"+a.Dir, b.Host+"\x00"+b.Dir)
	})
	for _, at := range places {
		g, l, err := repoCandidates(ctx, d, at, into, byRepo[at])
		if err != nil {
			return nil, nil, err
		}
		groups, left = append(groups, g), append(left, l...)
	}
	return groups, left, nil
}

// repoCandidates forecasts the task branches of one repository and sorts
// its tasks: done and unmerged (candidates), unmerged but not done (left),
// merged or gone (dropped).
func repoCandidates(ctx context.Context, d Deps, at projects.Place, into string, tasks []*state.Task) ([]candidate, []LeftTask, error) {
	gctx, err := d.GitOn(ctx, at.Host)
	if err != nil {
		return nil, nil, err
	}
	fc, err := forecastRepo(gctx, d.git(), at.Dir, into, "")
	if errors.Is(err, gitsnap.ErrNotRepo) {
		return nil, nil, nil // the project is gone: nothing to merge into
	}
	if err != nil {
		return nil, nil, fmt.Errorf("merge every done task: forecast in %s: %w", at.Dir, err)
	}
	byBranch := map[string]gitsnap.BranchForecast{}
	for _, b := range fc.Branches {
		byBranch[b.Branch] = b
	}
	var cands []candidate
	var left []LeftTask
	for _, t := range tasks {
		b, ok := byBranch[t.Branch]
		switch {
		case !ok || b.UpToDate:
			continue // its worktree is gone, or nothing of it is unmerged
		case t.Status != state.StatusDone:
			left = append(left, LeftTask{Task: t.ID, Branch: t.Branch,
				Reason: fmt.Sprintf("%s, not done (merge it by name if you want it: runner merge %s)", t.Status, t.ID)})
		default:
			cands = append(cands, candidate{task: t, forecast: b})
		}
	}
	return cands, left, nil
}

// mergeOrder orders one repository's candidates so the conflicts that can
// be avoided are: first a set of branches that merge cleanly and do not
// conflict with each other, picked greedily (fewest conflicts with the
// other candidates first, then the oldest); then those that conflict with
// a picked one; last those that conflict with the target alone. Conflicts
// with branches that are not candidates do not count.
func mergeOrder(cands []candidate) []candidate {
	in := map[string]bool{}
	for _, c := range cands {
		in[c.forecast.Branch] = true
	}
	pairs := func(c candidate) []string {
		var with []string
		for _, w := range c.forecast.With {
			if in[w.Branch] {
				with = append(with, w.Branch)
			}
		}
		return with
	}
	sorted := slices.Clone(cands)
	slices.SortStableFunc(sorted, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(len(pairs(a)), len(pairs(b))), a.task.Ended.Compare(b.task.Ended), strings.Compare(a.task.ID, b.task.ID))
	})
	var first, then, last []candidate
	picked := map[string]bool{}
	for _, c := range sorted {
		switch {
		case len(c.forecast.Conflicts) > 0:
			last = append(last, c)
		case slices.ContainsFunc(pairs(c), func(b string) bool { return picked[b] }):
			then = append(then, c)
		default:
			picked[c.forecast.Branch] = true
			first = append(first, c)
		}
	}
	return slices.Concat(first, then, last)
}
