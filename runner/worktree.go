// A git worktree per task: where it lives, making it at start, and
// merging its branch back (runner merge).

package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/projects"
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
func (env *Env) startWorktree(ctx context.Context, task *state.Task, snap *gitsnap.Snapshot, setup *config.WorktreeSetup) (worktreeStart, error) {
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
	switch log := env.Store.TaskFile("log", task.ID); {
	case setup == nil:
	case task.Tmux.Host != "":
		c, err := env.hostConn(ctx, task.Tmux.Host)
		if err == nil {
			err = applySetupThere(ctx, setup, c, snap.Dir, top, dir, log, task.ID)
		}
		if err != nil {
			return worktreeStart{}, err
		}
	default:
		if err := applySetup(ctx, setup, snap.Dir, top, dir, log, task.ID); err != nil {
			return worktreeStart{}, err
		}
	}
	return worktreeStart{dir: dir, branch: branch}, nil
}

// resolveFrom checks dispatch --from: a task with a worktree of its own,
// among the tasks the new one waits for.
func resolveFrom(st *state.State, ref string, after []string) (string, error) {
	if ref == "" {
		return "", nil
	}
	t, err := st.FindTask(ref)
	if err != nil {
		return "", exit.Usagef("--from %s: %v (see 'runner ps --all')", ref, err)
	}
	if t.Branch == "" {
		return "", exit.Usagef("--from %s: the task has no worktree of its own (it was not dispatched with --worktree)", t.ID)
	}
	if !slices.Contains(after, t.ID) {
		return "", exit.Usagef("--from %s: give --after %s too, so the task starts once %s is done", t.ID, t.ID, t.ID)
	}
	return t.ID, nil
}

// snapshotDir is the directory whose state a task starts from: its own,
// or with --from the other task's worktree, whose leftovers are committed
// on its branch first.
func (env *Env) snapshotDir(ctx context.Context, task *state.Task, spec *StartSpec) (string, error) {
	if spec.From == "" {
		return task.Dir, nil
	}
	from, err := env.rec().Task(ctx, spec.From)
	if err != nil {
		return "", fmt.Errorf("--from %s: %w", spec.From, err)
	}
	text, _ := env.Store.TaskText(from)
	if from.Tmux.Host != task.Tmux.Host {
		return "", exit.Usagef("--from %s: that task ran on %s, this one on %s: start from a task of the same machine", from.ID, orHere(from.Tmux.Host), orHere(task.Tmux.Host))
	}
	if ctx, err = env.GitContext(ctx, from); err != nil {
		return "", err
	}
	if _, err := gitsnap.Commit(ctx, from.Dir, gitsnap.CommitOptions{TaskID: from.ID, Task: text, Project: from.Project, Agent: from.Agent, Snapshot: from.ID, All: true}); err != nil {
		return "", fmt.Errorf("--from %s: commit what its agent left in %s: %w", from.ID, from.Dir, err)
	}
	return from.Dir, nil
}

// MergeRequest is one `runner merge`.
type MergeRequest struct {
	Ref     string
	Into    string // the target branch ("" for the project's current branch)
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
	gctx, err := env.GitContext(ctx, t)
	if err != nil {
		return t, nil, err
	}
	c, err := gitsnap.Commit(gctx, t.Dir, gitsnap.CommitOptions{TaskID: t.ID, Task: text, Project: t.Project, Agent: t.Agent, Snapshot: t.ID, All: true})
	if err != nil {
		return t, nil, fmt.Errorf("merge %s: commit what the agent left in %s: %w", t.ID, t.Dir, err)
	}
	snap, err := gitsnap.Get(gctx, t.Origin, t.ID)
	if err != nil {
		return t, nil, fmt.Errorf("merge %s: its snapshot: %w", t.ID, err)
	}
	msg := req.Message
	if msg == "" {
		msg = fmt.Sprintf("Merge %s: %s\n\nRunner-Task: %s", t.Branch, taskTitle(text), t.ID)
	}
	res, err := gitsnap.Merge(gctx, t.Origin, t.Dir, t.Branch, gitsnap.MergeOptions{Base: snap.Commit, Squash: req.Squash, Rebase: req.Rebase, Message: msg, Into: req.Into})
	switch {
	case errors.Is(err, gitsnap.ErrConflict):
		return t, nil, &exit.ExitError{Code: exit.ExitFailed, Err: err}
	case errors.Is(err, gitsnap.ErrLocalChanges), errors.Is(err, gitsnap.ErrDetachedHead), errors.Is(err, gitsnap.ErrInProgress), errors.Is(err, gitsnap.ErrNoBranch):
		return t, nil, exit.Usagef("%v", err)
	case err != nil:
		return t, nil, err
	}
	env.rec().Journal(ctx, t, "merge", fmt.Sprintf("%s into %s (%s): %s; leftovers: %s", t.Branch, res.Into, res.Mode, res.Commit, c.Outcome))
	return t, res, nil
}

// WorktreeInfo is one task worktree, as runner worktree list and gc see it.
type WorktreeInfo struct {
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
}

// Worktrees lists the worktrees on runner/ branches of every repository
// runner knows (the registered projects and the tasks' origins), from
// git's own list, so one whose task record is gone is found too.
func Worktrees(ctx context.Context, env *Env) ([]WorktreeInfo, error) {
	st, err := Reconcile(ctx, env)
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
	var out []WorktreeInfo
	places := slices.SortedFunc(maps.Keys(repos), func(a, b projects.Place) int { return strings.Compare(a.Host+"\x00"+a.Dir, b.Host+"\x00"+b.Dir) })
	for _, at := range places {
		repo := at.Dir
		ctx, err := env.GitOn(ctx, at.Host)
		if err != nil {
			continue // an unknown host
		}
		list, err := gitsnap.Worktrees(ctx, repo, gitsnap.BranchPrefix)
		if err != nil {
			continue // not a repository (any more), or a host that does not answer
		}
		for _, w := range list {
			if seen[projects.Place{Dir: w.Path, Host: at.Host}] {
				continue // two projects in one repository
			}
			seen[projects.Place{Dir: w.Path, Host: at.Host}] = true
			info := WorktreeInfo{Branch: w.Branch, Path: w.Path, Origin: repo, Host: at.Host, Gone: w.Prunable}
			id := strings.TrimPrefix(w.Branch, gitsnap.BranchPrefix)
			base := ""
			if t := st.Task(id); t != nil {
				info.Task, info.Status, info.Ended = t.ID, t.Status, t.Ended
				if snap, err := gitsnap.Get(ctx, repo, t.ID); err == nil {
					base = snap.Commit
				}
			}
			info.Merged, _ = gitsnap.BranchMerged(ctx, repo, w.Branch, base)
			if info.Merged && !w.Prunable {
				// What the agent left uncommitted is not merged either.
				if dirty, err := gitsnap.Dirty(ctx, w.Path); err != nil || dirty {
					info.Merged = false
				}
			}
			out = append(out, info)
		}
	}
	return out, nil
}

// gcWorktrees removes the worktrees of finished tasks whose branch is
// merged (with opts.ForceWorktrees, any finished task's) and that ended
// at least opts.OlderThan ago, and their branches. An
// unmerged one is kept and listed with the reason: no agent's work is
// lost silently. A worktree whose task record is gone counts as finished.
func (env *Env) gcWorktrees(ctx context.Context, opts GCOptions) ([]WorktreeInfo, error) {
	list, err := Worktrees(ctx, env)
	if err != nil {
		return nil, err
	}
	for i := range list {
		w := &list[i]
		switch {
		case w.Task != "" && !w.Status.IsTerminal():
			w.Kept = "the task is " + string(w.Status)
		case w.Task != "" && env.now().Sub(w.Ended) < opts.OlderThan:
			w.Kept = "the task ended less than " + opts.OlderThan.String() + " ago"
		case w.Task == "" && !env.madeByRunner(ctx, w):
			// No task record names it: only one runner made (a task id
			// for its branch, its folder in runner's worktree home) may
			// go; a user's own runner/… branch and worktree never do.
			w.Kept = "not a worktree of runner's: no task record names it, and it is not a task branch in " + gitsnap.WorktreeHomeName
		case !w.Merged && !opts.ForceWorktrees:
			w.Kept = "unmerged: runner merge " + orDashID(w.Task) + " (or runner gc --force-worktrees to drop it)"
		case opts.DryRun:
		default:
			gctx, err := env.GitOn(ctx, w.Host)
			if err != nil {
				w.Kept = err.Error()
				continue
			}
			if err := gitsnap.WorktreeRemove(gctx, w.Origin, w.Path); err != nil {
				w.Kept = err.Error()
				continue
			}
			if err := gitsnap.DeleteBranch(gctx, w.Origin, w.Branch); err != nil {
				w.Kept = "worktree removed; " + err.Error()
				continue
			}
			w.Removed = true
		}
	}
	return list, nil
}

// madeByRunner reports whether w, which no task record names, is a
// worktree runner made: its branch is runner/ and a task id, and its
// folder is in runner's worktree home of its repository.
func (env *Env) madeByRunner(ctx context.Context, w *WorktreeInfo) bool {
	if !state.ValidTaskID(strings.TrimPrefix(w.Branch, gitsnap.BranchPrefix)) {
		return false
	}
	gctx, err := env.GitOn(ctx, w.Host)
	if err != nil {
		return false
	}
	home, err := gitsnap.WorktreeHome(gctx, w.Origin)
	if err != nil {
		return false
	}
	return filepath.Dir(filepath.Clean(w.Path)) == filepath.Clean(home)
}

// orHere names a machine: its host, or "this machine".
func orHere(host string) string {
	if host == "" {
		return "this machine"
	}
	return "host " + host
}

func orDashID(id string) string {
	if id == "" {
		return "-"
	}
	return id
}
