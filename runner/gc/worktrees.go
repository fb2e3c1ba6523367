package gc

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/overlap"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
)

// gcWorktrees removes the worktrees of finished tasks whose branch is
// merged (with opts.ForceWorktrees, any finished task's) and that ended
// at least opts.OlderThan ago, and their branches. An
// unmerged one is kept and listed with the reason: no agent's work is
// lost silently. A worktree whose task record is gone counts as finished.
func gcWorktrees(ctx context.Context, d Deps, opts Options) ([]worktree.Info, error) {
	list, err := d.ListWorktrees(ctx)
	if err != nil {
		return nil, err
	}
	for i := range list {
		w := &list[i]
		switch {
		case w.Task != "" && !w.Status.IsTerminal():
			w.Kept = "the task is " + string(w.Status)
		case w.Task != "" && d.Now().Sub(w.Ended) < opts.OlderThan:
			w.Kept = "the task ended less than " + opts.OlderThan.String() + " ago"
		case w.Task == "" && !madeByRunner(ctx, d, w):
			// No task record names it: only one runner made (a task id
			// for its branch, its folder in runner's worktree home) may
			// go; a user's own runner/… branch and worktree never do.
			w.Kept = "not a worktree of runner's: no task record names it, and it is not a task branch in " + gitsnap.WorktreeHomeName
		case !w.Merged && !opts.ForceWorktrees:
			w.Kept = "unmerged: runner merge " + textutil.OrDash(w.Task) + " (or runner gc --force-worktrees to drop it)"
		case opts.DryRun:
		default:
			gctx, err := d.Hosts.GitOn(ctx, w.Host)
			if err != nil {
				w.Kept = err.Error()
				continue
			}
			if err := d.git().WorktreeRemove(gctx, w.Origin, w.Path); err != nil {
				w.Kept = err.Error()
				continue
			}
			if err := d.git().DeleteBranch(gctx, w.Origin, w.Branch); err != nil {
				w.Kept = "worktree removed; " + err.Error()
				continue
			}
			w.Removed = true
			if w.Task != "" {
				// Its branch is gone: its changes meet no other task's.
				_ = d.Store.Update(ctx, func(st *state.State) error { overlap.Forget(st, w.Task, time.Time{}); return nil })
			}
		}
	}
	return list, nil
}

// madeByRunner reports whether w, which no task record names, is a
// worktree runner made: its branch is runner/ and a task id, and its
// folder is in runner's worktree home of its repository.
func madeByRunner(ctx context.Context, d Deps, w *worktree.Info) bool {
	if !state.ValidTaskID(strings.TrimPrefix(w.Branch, gitsnap.BranchPrefix)) {
		return false
	}
	gctx, err := d.Hosts.GitOn(ctx, w.Host)
	if err != nil {
		return false
	}
	home, err := d.git().WorktreeHome(gctx, w.Origin)
	if err != nil {
		return false
	}
	return filepath.Dir(filepath.Clean(w.Path)) == filepath.Clean(home)
}
