// A git worktree per task: where it lives, making it at start, and
// merging its branch back (runner merge).

package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/state"
)

// WorktreeDir is where task id's worktree lives: under the state
// directory, outside the project, so the project's own tooling (git
// status, file watchers, test runners walking the tree) never sees it.
func (env *Env) WorktreeDir(id string) string {
	return filepath.Join(env.Store.Dir(), "worktrees", id)
}

// worktreeStart is a task's worktree, once made.
type worktreeStart struct {
	dir    string // where the agent starts: the worktree, or the project's subdirectory in it
	branch string
}

// startWorktree makes task's worktree on branch runner/<id> at its
// snapshot: the agent starts from exactly what the user sees, uncommitted
// and untracked files included, and the user's work tree, index, HEAD and
// stash stay as they are. A project that is a subdirectory of a larger
// repository starts in the same subdirectory of the worktree.
func (env *Env) startWorktree(ctx context.Context, task *state.Task, snap *gitsnap.Snapshot) (worktreeStart, error) {
	top := env.WorktreeDir(task.ID)
	branch := gitsnap.BranchPrefix + task.ID
	if err := gitsnap.WorktreeAdd(ctx, task.Dir, top, branch, snap.Commit); err != nil {
		return worktreeStart{}, err
	}
	dir := top
	real, err := filepath.EvalSymlinks(task.Dir)
	if err != nil {
		real = task.Dir
	}
	if rel, err := filepath.Rel(snap.Dir, real); err == nil && rel != "." && filepath.IsLocal(rel) {
		dir = filepath.Join(top, rel)
	}
	return worktreeStart{dir: dir, branch: branch}, nil
}

// MergeRequest is one `runner merge`.
type MergeRequest struct {
	Ref     string
	Squash  bool
	Rebase  bool
	Message string
}

// ErrMergeConflict is wrapped by a merge that conflicts (exit 1).
var ErrMergeConflict = gitsnap.ErrConflict

// Merge commits what the task's agent left uncommitted in its worktree
// (the commit protocol: the Runner-Task trailer), then merges the task's
// branch into the branch checked out in the project's directory. A task
// still at work refuses (exit 5); a task without a worktree, or local
// changes in the paths the merge touches, are bad input (exit 2); a
// conflict changes nothing and is exit 1, naming the files.
func Merge(ctx context.Context, env *Env, req MergeRequest) (*state.Task, *gitsnap.MergeResult, error) {
	if req.Squash && req.Rebase {
		return nil, nil, exit.Usagef("--squash and --rebase exclude each other")
	}
	t, err := GetTask(ctx, env, req.Ref)
	if err != nil {
		return nil, nil, err
	}
	if t.Branch == "" || t.Origin == "" {
		return t, nil, exit.Usagef("task %s has no worktree of its own (dispatch with --worktree); its changes are in %s already", t.ID, t.Dir)
	}
	if !t.Status.IsTerminal() && t.Status != state.StatusOrphaned {
		return t, nil, &exit.ExitError{Code: exit.ExitBusy, Err: fmt.Errorf("task %s is %s: its agent may still change the worktree (wait for it: runner wait %s)", t.ID, t.Status, t.ID)}
	}
	text, err := env.Store.TaskText(t)
	if err != nil {
		return t, nil, err
	}
	c, err := gitsnap.Commit(ctx, t.Dir, gitsnap.CommitOptions{TaskID: t.ID, Task: text, Project: t.Project, Agent: t.Agent, Snapshot: t.ID, All: true})
	if err != nil {
		return t, nil, fmt.Errorf("merge %s: commit what the agent left in %s: %w", t.ID, t.Dir, err)
	}
	snap, err := gitsnap.Get(ctx, t.Origin, t.ID)
	if err != nil {
		return t, nil, fmt.Errorf("merge %s: its snapshot: %w", t.ID, err)
	}
	msg := req.Message
	if msg == "" {
		msg = fmt.Sprintf("Merge %s: %s\n\nRunner-Task: %s", t.Branch, taskTitle(text), t.ID)
	}
	res, err := gitsnap.Merge(ctx, t.Origin, t.Dir, t.Branch, gitsnap.MergeOptions{Base: snap.Commit, Squash: req.Squash, Rebase: req.Rebase, Message: msg})
	switch {
	case errors.Is(err, gitsnap.ErrConflict):
		return t, nil, &exit.ExitError{Code: exit.ExitFailed, Err: err}
	case errors.Is(err, gitsnap.ErrLocalChanges), errors.Is(err, gitsnap.ErrDetachedHead), errors.Is(err, gitsnap.ErrInProgress):
		return t, nil, exit.Usagef("%v", err)
	case err != nil:
		return t, nil, err
	}
	env.journal(ctx, t, "merge", fmt.Sprintf("%s into %s (%s): %s; leftovers: %s", t.Branch, res.Into, res.Mode, res.Commit, c.Outcome))
	return t, res, nil
}
