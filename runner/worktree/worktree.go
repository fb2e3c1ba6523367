package worktree

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/overlap"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
)

// MergeRequest is one `runner merge`.
type MergeRequest struct {
	Ref     string
	Into    string // the target branch ("" for the project's current branch)
	Squash  bool
	Rebase  bool
	Message string
}

// ErrConflict is wrapped by a merge that conflicts (exit 1).
var ErrConflict = gitsnap.ErrConflict

// Merge commits what the task's agent left uncommitted in its worktree
// (the commit protocol: the Runner-Task trailer), then merges the task's
// branch into the branch checked out in the project's directory. A task
// still at work refuses (exit 5); a task without a worktree, or local
// changes in the paths the merge touches, are bad input (exit 2); a
// conflict changes nothing and is exit 1, naming the files.
func Merge(ctx context.Context, d Deps, req MergeRequest) (*state.Task, *gitsnap.MergeResult, error) {
	if req.Squash && req.Rebase {
		return nil, nil, fault.Usagef("--squash and --rebase exclude each other")
	}
	t, err := d.GetTask(ctx, req.Ref)
	if err != nil {
		return nil, nil, err
	}
	if t.Branch == "" || t.Origin == "" {
		return t, nil, fault.Usagef("task %s has no worktree of its own (dispatch with --worktree); its changes are in %s already", t.ID, t.Dir)
	}
	if !t.Status.IsTerminal() && t.Status != state.StatusOrphaned {
		return t, nil, fault.Busyf("task %s is %s: its agent may still change the worktree (wait for it: runner wait %s)", t.ID, t.Status, t.ID)
	}
	text, err := d.Store.TaskText(t)
	if err != nil {
		return t, nil, err
	}
	gctx, err := d.GitContext(ctx, t)
	if err != nil {
		return t, nil, err
	}
	c, err := d.git().Commit(gctx, t.Dir, gitsnap.CommitOptions{TaskID: t.ID, Task: text, Project: t.Project, Agent: t.Agent, Snapshot: t.ID, All: true})
	if err != nil {
		return t, nil, fmt.Errorf("merge %s: commit what the agent left in %s: %w", t.ID, t.Dir, err)
	}
	snap, err := d.git().Snapshot(gctx, t.Origin, t.ID)
	if err != nil {
		return t, nil, fmt.Errorf("merge %s: its snapshot: %w", t.ID, err)
	}
	msg := req.Message
	if msg == "" {
		msg = fmt.Sprintf("Merge %s: %s\n\nRunner-Task: %s", t.Branch, textutil.Headline(text, 100), t.ID)
	}
	res, err := d.git().Merge(gctx, t.Origin, t.Dir, t.Branch, gitsnap.MergeOptions{Base: snap.Commit, Squash: req.Squash, Rebase: req.Rebase, Message: msg, Into: req.Into})
	switch {
	case errors.Is(err, gitsnap.ErrConflict):
		return t, nil, err // exit 1: a conflict (gitsnap.ErrConflict)
	case errors.Is(err, gitsnap.ErrLocalChanges), errors.Is(err, gitsnap.ErrDetachedHead), errors.Is(err, gitsnap.ErrInProgress), errors.Is(err, gitsnap.ErrNoBranch):
		return t, nil, fault.Usagef("%v", err)
	case err != nil:
		return t, nil, err
	}
	// Its changes are the branch's it went into now: they overlap no
	// other task's.
	merged := d.Now()
	if err := d.Store.Update(ctx, func(st *state.State) error { overlap.Forget(st, t.ID, merged); return nil }); err != nil {
		d.Warn("task %s: merged, but its overlaps were not cleared: %v", t.ID, err)
	}
	d.Record.Journal(ctx, t, "merge", fmt.Sprintf("%s into %s (%s): %s; leftovers: %s", t.Branch, res.Into, res.Mode, res.Commit, c.Outcome))
	return t, res, nil
}

// Info is one task worktree, as runner worktree list and gc see it.
type Info struct {
	Task   string       `json:"task"` // "" for a runner/ worktree no task record names
	Branch string       `json:"branch"`
	Path   string       `json:"path"`
	Origin string       `json:"origin"`
	Host   string       `json:"host,omitempty"` // the machine of Origin ("" here)
	Status state.Status `json:"status,omitempty"`
	Ended  time.Time    `json:"ended,omitzero"`
	// Merged: neither its commits nor uncommitted changes in the
	// worktree are missing from its repository's current branch.
	Merged bool `json:"merged"`
	// Gone is set when the directory was deleted by hand.
	Gone bool `json:"gone,omitempty"`
	// Removed is set when gc removed the worktree (and its branch);
	// Kept says why gc left it.
	Removed bool   `json:"removed,omitempty"`
	Kept    string `json:"kept,omitempty"`
	// Forecast is what merging it into its repository's current branch
	// would do (nil when it could not be told: ForecastError says why).
	Forecast      *Outlook `json:"forecast,omitempty"`
	ForecastError string   `json:"forecast_error,omitempty"`
}

// Worktrees lists the worktrees on runner/ branches of every repository
// runner knows (the registered projects and the tasks' origins), from
// git's own list, so one whose task record is gone is found too.
func List(ctx context.Context, d Deps) ([]Info, error) {
	st, err := d.Reconcile(ctx)
	if err != nil {
		return nil, err
	}
	all, err := st.AllTasks()
	if err != nil {
		return nil, err
	}
	repos := map[projects.Place]bool{}
	for _, p := range st.Projects {
		repos[projects.Place{Dir: p.Dir, Host: p.Host}] = true
	}
	for _, t := range all {
		if t.Branch != "" {
			if full := st.Task(t.ID); full != nil && full.Origin != "" {
				repos[projects.Place{Dir: full.Origin, Host: full.Tmux.Host}] = true
			}
		}
	}
	seen := map[projects.Place]bool{}
	var out []Info
	places := slices.SortedFunc(maps.Keys(repos), func(a, b projects.Place) int { return strings.Compare(a.Host+"\x00"+a.Dir, b.Host+"\x00"+b.Dir) })
	for _, at := range places {
		repo := at.Dir
		ctx, err := d.GitOn(ctx, at.Host)
		if err != nil {
			continue // an unknown host
		}
		list, err := d.git().Worktrees(ctx, repo, gitsnap.BranchPrefix)
		if err != nil {
			continue // not a repository (any more), or a host that does not answer
		}
		start := len(out)
		for _, w := range list {
			if seen[projects.Place{Dir: w.Path, Host: at.Host}] {
				continue // two projects in one repository
			}
			seen[projects.Place{Dir: w.Path, Host: at.Host}] = true
			info := Info{Branch: w.Branch, Path: w.Path, Origin: repo, Host: at.Host, Gone: w.Prunable}
			id := strings.TrimPrefix(w.Branch, gitsnap.BranchPrefix)
			base := ""
			if t := st.Task(id); t != nil {
				info.Task, info.Status, info.Ended = t.ID, t.Status, t.Ended
				if snap, err := d.git().Snapshot(ctx, repo, t.ID); err == nil {
					base = snap.Commit
				}
			}
			info.Merged, _ = d.git().BranchMerged(ctx, repo, w.Branch, base)
			if info.Merged && !w.Prunable {
				// What the agent left uncommitted is not merged either.
				if dirty, err := d.git().Dirty(ctx, w.Path); err != nil || dirty {
					info.Merged = false
				}
			}
			out = append(out, info)
		}
		addForecasts(ctx, d.git(), repo, out[start:])
	}
	return out, nil
}

// addForecasts fills the forecast of each of the worktrees of repo:
// merging its branch into repo's current branch, alone and after each
// other. A forecast that fails says why in each.
func addForecasts(ctx context.Context, git Git, repo string, infos []Info) {
	if len(infos) == 0 {
		return
	}
	fc, err := forecastRepo(ctx, git, repo, "", "")
	if err != nil {
		for i := range infos {
			infos[i].ForecastError = err.Error()
		}
		return
	}
	for i := range infos {
		for _, b := range fc.Branches {
			if b.Branch == infos[i].Branch {
				infos[i].Forecast = outlookOf(fc.Into, b)
			}
		}
	}
}
