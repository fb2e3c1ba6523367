package worktree

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// Outlook is the merge forecast of one task branch: whether merging it
// into Into conflicts, alone or after another unmerged task branch of
// the same repository.
type Outlook struct {
	Into string `json:"into"`
	// Clean: no conflict with Into, nor with any other branch.
	Clean bool `json:"clean"`
	// UpToDate: merging it would change nothing (merged already).
	UpToDate bool `json:"up_to_date,omitempty"`
	// Conflicts are the files merging it into Into alone conflicts on.
	Conflicts []string `json:"conflicts,omitempty"`
	// With are the other branches it conflicts with: each merges cleanly
	// alone, and whichever of the two is merged second stops.
	With []TaskConflict `json:"with,omitempty"`
}

// TaskConflict names another task branch and the files both change in
// ways that conflict.
type TaskConflict struct {
	Task   string   `json:"task"` // its task ID ("" when its branch names no task)
	Branch string   `json:"branch"`
	Files  []string `json:"files"`
}

// String is the forecast in a few words: "clean", "conflicts: a.go",
// "conflicts with t_x (a.go, b.go)", or "merged".
func (o *Outlook) String() string {
	switch {
	case o == nil:
		return "-"
	case o.UpToDate:
		return "merged"
	case o.Clean:
		return "clean"
	}
	var parts []string
	if len(o.Conflicts) > 0 {
		parts = append(parts, "conflicts: "+strings.Join(o.Conflicts, ", "))
	}
	for _, w := range o.With {
		name := w.Task
		if name == "" {
			name = w.Branch
		}
		parts = append(parts, fmt.Sprintf("conflicts with %s (%s)", name, strings.Join(w.Files, ", ")))
	}
	return strings.Join(parts, "; ")
}

// outlookOf turns gitsnap's forecast of one branch into an Outlook.
func outlookOf(into string, b gitsnap.BranchForecast) *Outlook {
	o := &Outlook{Into: into, Clean: b.Clean() && !b.UpToDate, UpToDate: b.UpToDate, Conflicts: b.Conflicts}
	for _, w := range b.With {
		o.With = append(o.With, TaskConflict{Task: taskOfBranch(w.Branch), Branch: w.Branch, Files: w.Files})
	}
	return o
}

// taskOfBranch is the task ID a runner/<id> branch stands for ("" for
// another name).
func taskOfBranch(branch string) string {
	id, ok := strings.CutPrefix(branch, gitsnap.BranchPrefix)
	if !ok || !state.ValidTaskID(id) {
		return ""
	}
	return id
}

// forecastRepo forecasts merging every runner/ branch checked out in a
// worktree of the repository containing origin (and want, whose
// worktree may be gone) into into ("" for its current branch). Each
// branch's changes count from its task's snapshot, as runner merge counts
// them, and its worktree's uncommitted work counts too. ctx carries the
// machine (Deps.GitContext, Deps.GitOn).
func forecastRepo(ctx context.Context, git Git, origin, into, want string) (*gitsnap.Forecast, error) {
	list, err := git.Worktrees(ctx, origin, gitsnap.BranchPrefix)
	if err != nil {
		return nil, fmt.Errorf("the worktrees of %s: %w", origin, err)
	}
	var branches []gitsnap.ForecastBranch
	seen := map[string]bool{}
	for _, w := range list {
		if seen[w.Branch] {
			continue
		}
		seen[w.Branch] = true
		b := gitsnap.ForecastBranch{Branch: w.Branch, Base: gitsnap.RefPrefix + strings.TrimPrefix(w.Branch, gitsnap.BranchPrefix)}
		if !w.Prunable {
			b.Worktree = w.Path
		}
		branches = append(branches, b)
	}
	if want != "" && !seen[want] {
		branches = append(branches, gitsnap.ForecastBranch{Branch: want, Base: gitsnap.RefPrefix + strings.TrimPrefix(want, gitsnap.BranchPrefix)})
	}
	return git.MergeForecast(ctx, origin, into, branches)
}

// CheckRequest is one `runner merge --check`.
type CheckRequest struct {
	Ref  string
	Into string // the target branch ("" for the project's current branch)
}

// Check is the forecast of merging one task's branch.
type Check struct {
	Task   string `json:"task"`
	Branch string `json:"branch"`
	Origin string `json:"origin"`
	Host   string `json:"host,omitempty"`
	Outlook
}

// CheckMerge forecasts merging the task's branch into the branch checked
// out in its project (or req.Into), and names the other unmerged task
// branches of its repository it conflicts with, touching no work tree,
// index, ref, HEAD or stash (here or on the task's host). A task without
// a branch, a branch or --into branch that is gone, or a project that is
// no repository are bad input (exit 2).
func CheckMerge(ctx context.Context, d Deps, req CheckRequest) (*Check, error) {
	t, err := d.GetTask(ctx, req.Ref)
	if err != nil {
		return nil, err
	}
	if t.Branch == "" || t.Origin == "" {
		return nil, fault.Usagef("task %s has no branch of its own (dispatch with --worktree); its changes are in %s already", t.ID, t.Dir)
	}
	gctx, err := d.GitContext(ctx, t)
	if err != nil {
		return nil, err
	}
	fc, err := forecastRepo(gctx, d.git(), t.Origin, req.Into, t.Branch)
	var missing *gitsnap.MissingBranchError
	switch {
	case errors.As(err, &missing) && missing.Target:
		return nil, fault.Usagef("merge --check %s --into %s: no such branch in %s (see git branch)", t.ID, req.Into, t.Origin)
	case errors.As(err, &missing):
		return nil, fault.Usagef("merge --check %s: branch %s is gone from %s (runner gc removed it, or it was deleted by hand; see git branch --list 'runner/*')", t.ID, missing.Branch, t.Origin)
	case errors.Is(err, gitsnap.ErrNotRepo), errors.Is(err, gitsnap.ErrBareRepo):
		return nil, fault.Usagef("merge --check %s: its project %s: %v", t.ID, t.Origin, err)
	case err != nil:
		return nil, fmt.Errorf("forecast the merge of %s in %s: %w", t.ID, t.Origin, err)
	}
	c := &Check{Task: t.ID, Branch: t.Branch, Origin: t.Origin, Host: t.Tmux.Host}
	for _, b := range fc.Branches {
		if b.Branch == t.Branch {
			c.Outlook = *outlookOf(fc.Into, b)
		}
	}
	return c, nil
}

// CheckMerges forecasts merging each task of refs (ids, all with branches
// of one repository: a group's candidates) into the project's branch, in
// one look at the repository (CheckMerge looks once per task). A task
// without a branch is left out of the result.
func CheckMerges(ctx context.Context, d Deps, refs []string) (map[string]*Check, error) {
	return CheckMergesInto(ctx, d, refs, "")
}

// CheckMergesInto is CheckMerges into branch into of the tasks'
// repository ("" its current branch).
func CheckMergesInto(ctx context.Context, d Deps, refs []string, into string) (map[string]*Check, error) {
	out := map[string]*Check{}
	var ts []*state.Task
	for _, ref := range refs {
		t, err := d.GetTask(ctx, ref)
		if err != nil {
			return nil, err
		}
		if t.Branch != "" && t.Origin != "" {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return out, nil
	}
	gctx, err := d.GitContext(ctx, ts[0])
	if err != nil {
		return nil, err
	}
	fc, err := forecastRepo(gctx, d.git(), ts[0].Origin, into, "")
	if err != nil {
		return nil, fmt.Errorf("forecast the merges in %s: %w", ts[0].Origin, err)
	}
	for _, t := range ts {
		for _, b := range fc.Branches {
			if b.Branch == t.Branch && t.Origin == ts[0].Origin {
				out[t.ID] = &Check{Task: t.ID, Branch: t.Branch, Origin: t.Origin, Host: t.Tmux.Host, Outlook: *outlookOf(fc.Into, b)}
			}
		}
	}
	return out, nil
}
