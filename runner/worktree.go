// A git worktree per task: where it lives, making it at start, and
// merging its branch back (runner merge).

package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/runner-cli/runner/runner/settings"
	wtsetup "github.com/runner-cli/runner/runner/worktree/setup"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/state"
)

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
func startWorktree(ctx context.Context, env *Env, task *state.Task, snap *gitsnap.Snapshot, setup *config.WorktreeSetup) (worktreeStart, error) {
	home, err := gitsnap.WorktreeHome(ctx, task.Dir)
	if err != nil {
		return worktreeStart{}, err
	}
	top := filepath.Join(home, task.ID)
	branch := gitsnap.BranchPrefix + task.ID
	if err := gitsnap.WorktreeAdd(ctx, task.Dir, top, branch, snap.Commit); err != nil {
		return worktreeStart{}, err
	}
	dir := top
	real, err := filepath.EvalSymlinks(task.Dir)
	if err != nil || task.Tmux.Host != "" {
		real = task.Dir // on a host, the path as it is there
	}
	if rel, err := filepath.Rel(snap.Dir, real); err == nil && rel != "." && filepath.IsLocal(rel) {
		dir = filepath.Join(top, rel)
	}
	if err := setUpWorktree(ctx, env, task, snap.Dir, top, dir, setup); err != nil {
		return worktreeStart{}, err
	}
	return worktreeStart{dir: dir, branch: branch}, nil
}

// setUpWorktree makes the new worktree top ready: the config's set-up
// (nil: none) and the ignored files the checkout's .worktreeinclude lists
// (at from's top, or in the project's directory dir there), here or on the
// task's host; what was copied is journaled.
func setUpWorktree(ctx context.Context, env *Env, task *state.Task, from, top, dir string, setup *config.WorktreeSetup) error {
	rel, _ := filepath.Rel(top, dir)
	_, include, err := gitsnap.Included(ctx, filepath.Join(from, rel))
	if err != nil {
		return fmt.Errorf("worktree set-up: %w", err)
	}
	if setup == nil && len(include) == 0 {
		return nil
	}
	log := env.Store.TaskFile("log", task.ID)
	var copied wtsetup.Copied
	if task.Tmux.Host != "" {
		c, cerr := env.HostConn(ctx, task.Tmux.Host)
		if cerr != nil {
			return cerr
		}
		copied, err = wtsetup.ApplyThere(ctx, setup, include, c, from, top, dir, log, task.ID)
	} else {
		copied, err = wtsetup.Apply(ctx, setup, include, from, top, dir, log, task.ID)
	}
	if len(include) > 0 {
		env.Record().Journal(ctx, task, "worktree-include", copied.Summary())
	}
	return err
}

// resolveFrom checks dispatch --from: a task with a worktree of its own,
// among the tasks the new one waits for.
func resolveFrom(st *state.State, ref string, after []string) (string, error) {
	if ref == "" {
		return "", nil
	}
	t, err := st.FindTask(ref)
	if err != nil {
		return "", fault.Usagef("--from %s: %v (see 'runner ps --all')", ref, err)
	}
	if t.Branch == "" {
		return "", fault.Usagef("--from %s: the task has no worktree of its own (it was not dispatched with --worktree)", t.ID)
	}
	if !slices.Contains(after, t.ID) {
		return "", fault.Usagef("--from %s: give --after %s too, so the task starts once %s is done", t.ID, t.ID, t.ID)
	}
	return t.ID, nil
}

// snapshotDir is the directory whose state a task starts from: its own,
// or with --from the other task's worktree, whose leftovers are committed
// on its branch first.
func snapshotDir(ctx context.Context, env *Env, task *state.Task, spec *settings.Start) (string, error) {
	if spec.From == "" {
		return task.Dir, nil
	}
	from, err := env.Record().Task(ctx, spec.From)
	if err != nil {
		return "", fmt.Errorf("start from task %s: %w", spec.From, err)
	}
	text, _ := env.Store.TaskText(from)
	if from.Tmux.Host != task.Tmux.Host {
		return "", fault.Usagef("--from %s: that task ran on %s, this one on %s: start from a task of the same machine", from.ID, hosts.Machine(from.Tmux.Host), hosts.Machine(task.Tmux.Host))
	}
	if ctx, err = env.GitContext(ctx, from); err != nil {
		return "", err
	}
	if _, err := gitsnap.Commit(ctx, from.Dir, gitsnap.CommitOptions{TaskID: from.ID, Task: text, Project: from.Project, Agent: from.Agent, Snapshot: from.ID, All: true}); err != nil {
		return "", fmt.Errorf("start from task %s: commit what its agent left in %s: %w", from.ID, from.Dir, err)
	}
	return from.Dir, nil
}
