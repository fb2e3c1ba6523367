package setup

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/state"
)

// Made is a task's worktree, once made.
type Made struct {
	Dir    string // where the agent starts: the worktree, or the project's subdirectory in it
	Branch string
}

// Where is what Start needs of the task's machine and record.
type Where struct {
	// Host is the connection to the task's host (called only for a task
	// on one).
	Host func(ctx context.Context) (*hosts.Conn, error)
	// Log is the task's log file, where the set-up command's output goes.
	Log string
	// Journal records what was copied.
	Journal func(ctx context.Context, kind, text string)
}

// Start makes task's worktree on branch runner/<id> at its snapshot (ctx
// is gitsnap's for the task's machine): the agent starts from exactly what
// the user sees, uncommitted and untracked files included, and the user's
// work tree, index, HEAD and stash stay as they are. A project that is a
// subdirectory of a larger repository starts in the same subdirectory of
// the worktree. Then the worktree is made ready (w, nil for none, and
// .worktreeinclude).
func Start(ctx context.Context, task *state.Task, snap *gitsnap.Snapshot, w *config.WorktreeSetup, at Where) (Made, error) {
	home, err := gitsnap.WorktreeHome(ctx, task.Dir)
	if err != nil {
		return Made{}, err
	}
	top := filepath.Join(home, task.ID)
	branch := gitsnap.BranchPrefix + task.ID
	if err := gitsnap.WorktreeAdd(ctx, task.Dir, top, branch, snap.Commit); err != nil {
		return Made{}, err
	}
	dir := top
	real, err := filepath.EvalSymlinks(task.Dir)
	if err != nil || task.Tmux.Host != "" {
		real = task.Dir // on a host, the path as it is there
	}
	if rel, err := filepath.Rel(snap.Dir, real); err == nil && rel != "." && filepath.IsLocal(rel) {
		dir = filepath.Join(top, rel)
	}
	if err := ready(ctx, task, snap.Dir, top, dir, w, at); err != nil {
		return Made{}, err
	}
	return Made{Dir: dir, Branch: branch}, nil
}

// ready makes the new worktree top ready: the config's set-up (nil: none)
// and the ignored files the checkout's .worktreeinclude lists (at from's
// top, or in the project's directory dir there), here or on the task's
// host; what was copied is journaled.
func ready(ctx context.Context, task *state.Task, from, top, dir string, w *config.WorktreeSetup, at Where) error {
	rel, _ := filepath.Rel(top, dir)
	_, include, err := gitsnap.Included(ctx, filepath.Join(from, rel))
	if err != nil {
		return fmt.Errorf("worktree set-up: %w", err)
	}
	if w == nil && len(include) == 0 {
		return nil
	}
	var copied Copied
	if task.Tmux.Host != "" {
		c, cerr := at.Host(ctx)
		if cerr != nil {
			return cerr
		}
		copied, err = ApplyThere(ctx, w, include, c, from, top, dir, at.Log, task.ID)
	} else {
		copied, err = Apply(ctx, w, include, from, top, dir, at.Log, task.ID)
	}
	if len(include) > 0 {
		at.Journal(ctx, "worktree-include", copied.Summary())
	}
	return err
}
