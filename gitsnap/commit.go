package gitsnap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
)

// CommitOptions describe the task whose changes Commit records.
type CommitOptions struct {
	// TaskID is the task's ID, written as the trailer "Runner-Task: <id>".
	TaskID string
	// Task is the task text; its first line becomes the subject.
	Task string
	// Project and Agent are named in the message body.
	Project string
	Agent   string
	// Snapshot is the ID of the snapshot taken before the task; empty
	// means TaskID.
	Snapshot string
	// Branch commits on a new branch runner/<TaskID> starting at HEAD,
	// leaving the current branch, the index and the work tree alone.
	Branch bool
	// All commits everything even when the tree was already dirty when the
	// snapshot was taken (or there is no snapshot).
	All bool
}

// CommitOutcome says how Commit ended when it did not fail.
type CommitOutcome string

const (
	// Committed: a commit was made.
	Committed CommitOutcome = "committed"
	// NothingToCommit: the work tree equals HEAD; no commit was made.
	NothingToCommit CommitOutcome = "nothing_to_commit"
)

// CommitResult says what Commit did.
type CommitResult struct {
	Outcome CommitOutcome `json:"outcome"`
	Commit  string        `json:"commit,omitempty"`
	// Branch is the branch the commit is on (e.g. "main" or "runner/t_x").
	Branch  string `json:"branch"`
	Parent  string `json:"parent,omitempty"`
	Message string `json:"message,omitempty"`
	Counts  Counts `json:"counts"`
	// HeadMoved is true when HEAD is no longer the snapshot's base (the
	// agent committed on its own); the commit goes on top of the new HEAD.
	HeadMoved bool `json:"head_moved,omitempty"`
	// FallbackIdentity is true when the user has no git identity and
	// runner's own (runner <runner@localhost>) was used.
	FallbackIdentity bool `json:"fallback_identity,omitempty"`
}

// Commit records what a task changed in the work tree containing dir: all
// tracked changes and untracked, non-ignored files, on top of HEAD, with a
// message built from the task and the trailer "Runner-Task: <id>". On the
// current branch the branch ref and the index are updated (under index.lock,
// retried with backoff while another git process holds it); with
// opts.Branch the commit goes on runner/<id> and nothing else moves.
//
// It refuses with errors wrapping ErrDirtyAtSnapshot (unless opts.All),
// ErrInProgress (merge, rebase, cherry-pick, revert), ErrDetachedHead (on
// the current branch) and ErrExists (runner/<id> exists). A clean tree is
// the outcome NothingToCommit, not an error.
func Commit(ctx context.Context, dir string, opts CommitOptions) (*CommitResult, error) {
	if !ValidID(opts.TaskID) {
		return nil, fmt.Errorf("commit task %q: %w", opts.TaskID, ErrBadID)
	}
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if op := r.inProgress(ctx); op != "" {
		return nil, fmt.Errorf("commit task %s in %s: a %s is in progress: %w (finish or abort it, then commit again)",
			opts.TaskID, r.top, op, ErrInProgress)
	}
	snapID := opts.Snapshot
	if snapID == "" {
		snapID = opts.TaskID
	}
	snap, err := r.get(ctx, snapID)
	switch {
	case errors.Is(err, ErrNotFound) && opts.All:
		snap = nil
	case errors.Is(err, ErrNotFound):
		return nil, fmt.Errorf("commit task %s in %s: no snapshot %s was taken before the task, so its changes cannot be told from others: %w (commit by hand, or commit everything)",
			opts.TaskID, r.top, snapID, ErrDirtyAtSnapshot)
	case err != nil:
		return nil, err
	case snap.Dirty && !opts.All:
		// In a project inside a larger repository only the project's
		// directory counts: work elsewhere is not committed.
		dirty := snap.Counts.Total()
		if r.prefix != "" {
			ch, err := r.treeChanges(ctx, snap.Base, snap.Tree, r.scope()...)
			if err != nil {
				return nil, err
			}
			dirty = len(ch)
		}
		if dirty > 0 {
			return nil, fmt.Errorf("commit task %s in %s: %w: %d paths had uncommitted changes when snapshot %s was taken, so a commit would mix them with the task's (commit by hand, or commit everything)",
				opts.TaskID, r.top, ErrDirtyAtSnapshot, dirty, snap.ID)
		}
	}
	msg := commitMessage(opts)
	res := &CommitResult{Message: msg, Parent: r.head, HeadMoved: snap != nil && snap.Base != r.head}
	if opts.Branch {
		return r.commitOnBranch(ctx, opts.TaskID, res)
	}
	if r.headRef == "" {
		return nil, fmt.Errorf("commit task %s in %s: %w (check out a branch, or commit on a branch of its own, runner/%s)",
			opts.TaskID, r.top, ErrDetachedHead, opts.TaskID)
	}
	return r.commitOnCurrent(ctx, res)
}

func (r *repo) commitOnBranch(ctx context.Context, id string, res *CommitResult) (*CommitResult, error) {
	res.Branch = "runner/" + id
	ref := "refs/heads/" + res.Branch
	if _, err := r.git(ctx, "rev-parse", "-q", "--verify", ref); err == nil {
		return nil, fmt.Errorf("commit task %s in %s: branch %s %w (delete it or commit on the current branch)", id, r.top, res.Branch, ErrExists)
	}
	tree, err := r.scopedTree(ctx)
	if err != nil {
		return nil, err
	}
	if done, err := r.fillCommit(ctx, tree, res); err != nil {
		return nil, err
	} else if done {
		return res, nil
	}
	if _, err := run(ctx, call{via: r.via, dir: r.top, locks: true, args: []string{"update-ref", "-m", "runner: commit task " + id, ref, res.Commit, ""}}); err != nil {
		return nil, err
	}
	return res, nil
}

func (r *repo) commitOnCurrent(ctx context.Context, res *CommitResult) (*CommitResult, error) {
	res.Branch = r.branch()
	lock, err := acquireLock(ctx, r.fs, r.index+".lock")
	if err != nil {
		return nil, fmt.Errorf("commit in %s: %w", r.top, err)
	}
	installed := false
	defer func() {
		if !installed {
			_ = r.fs.remove(context.WithoutCancel(ctx), lock)
		}
	}()
	// The new index is built on a temporary copy, then copied into the lock
	// file with its modification time (so git's racy-entry bookkeeping stays
	// right) and installed by renaming the lock, as git does.
	tmp, err := r.fs.tempDir(ctx)
	if err != nil {
		return nil, fmt.Errorf("commit in %s: temporary index: %w", r.top, err)
	}
	defer r.fs.removeAll(ctx, tmp)
	idx := tmp + "/index"
	var tree string
	if r.prefix == "" {
		if tree, err = r.captureTreeInto(ctx, idx, r.index); err != nil {
			return nil, err
		}
	} else {
		// A project inside a larger repository: the commit takes only
		// its directory; the user's index keeps what they staged
		// elsewhere, and gets the project's files as committed.
		if tree, err = r.scopedTree(ctx); err != nil {
			return nil, err
		}
		if _, err := r.fs.copyIndex(ctx, r.index, idx); err != nil {
			return nil, fmt.Errorf("commit in %s: %w", r.top, err)
		}
		if _, err := r.gitIndex(ctx, idx, nil, append([]string{"add", "-A"}, r.scope()...)...); err != nil {
			return nil, err
		}
	}
	if done, err := r.fillCommit(ctx, tree, res); err != nil {
		return nil, err
	} else if done {
		return res, nil
	}
	if _, err := r.fs.copyIndex(ctx, idx, lock); err != nil {
		return nil, fmt.Errorf("commit in %s: %w", r.top, err)
	}
	old := r.head // "" makes update-ref insist that an unborn branch is still unborn
	if _, err := run(ctx, call{via: r.via, dir: r.top, locks: true, args: []string{"update-ref", "-m", "runner: " + textutil.FirstLine(res.Message), r.headRef, res.Commit, old}}); err != nil {
		return nil, err
	}
	if err := r.fs.rename(ctx, lock, r.index); err != nil {
		return nil, fmt.Errorf("commit %s made on %s, but the index %s was not updated: %w (run 'git reset' to refresh it)", res.Commit, res.Branch, r.index, err)
	}
	installed = true
	return res, nil
}

// fillCommit commits tree on r.head unless it equals HEAD's tree, filling
// res. It reports true when there was nothing to commit.
func (r *repo) fillCommit(ctx context.Context, tree string, res *CommitResult) (bool, error) {
	changes, err := r.treeChanges(ctx, r.headTree, tree)
	if err != nil {
		return false, err
	}
	res.Counts = countChanges(changes)
	if len(changes) == 0 {
		res.Outcome = NothingToCommit
		return true, nil
	}
	commit, fallback, err := r.commitTreeIdent(ctx, tree, r.head, res.Message)
	if err != nil {
		return false, err
	}
	res.Outcome, res.Commit, res.FallbackIdentity = Committed, commit, fallback
	return false, nil
}

// inProgress names the operation in progress in the work tree, if any.
func (r *repo) inProgress(ctx context.Context) string {
	marks := []struct{ path, op string }{
		{"MERGE_HEAD", "merge"},
		{"rebase-merge", "rebase"},
		{"rebase-apply", "rebase"},
		{"CHERRY_PICK_HEAD", "cherry-pick"},
		{"REVERT_HEAD", "revert"},
	}
	paths := make([]string, len(marks))
	for i, m := range marks {
		paths[i] = r.gitDir + "/" + m.path
	}
	found, err := r.fs.existing(ctx, paths...)
	if err != nil {
		return ""
	}
	for i, ok := range found {
		if ok {
			return marks[i].op
		}
	}
	return ""
}

// acquireLock creates path exclusively on fs, retrying with backoff for
// up to lockWait while another process holds it.
func acquireLock(ctx context.Context, fs fsys, path string) (string, error) {
	// The wait counts from the lock found held, not from the first try:
	// a slow first try (a loaded machine) is no time waited for it.
	var deadline time.Time
	pause := lockBackoff
	for {
		made, err := fs.createExcl(ctx, path)
		if err != nil {
			return "", fmt.Errorf("lock %s: %w", path, err)
		}
		if made {
			return path, nil
		}
		if deadline.IsZero() {
			deadline = clock.Now().Add(lockWait)
		}
		if clock.Now().Add(pause).After(deadline) {
			return "", fmt.Errorf("%s exists: %w (waited %v; another git process, perhaps an agent, is working in this repository; if none is, remove the stale file)", path, ErrLocked, lockWait)
		}
		beforeLockRetry()
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
		pause = min(pause*2, maxLockBackoff)
	}
}

// commitMessage builds the post-task commit message.
func commitMessage(o CommitOptions) string {
	subject := textutil.FirstLine(o.Task)
	if subject == "" {
		subject = "runner task " + o.TaskID
	}
	if r := []rune(subject); len(r) > 72 {
		subject = strings.TrimSpace(string(r[:71])) + "…"
	}
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	var who []string
	if a := oneLine(o.Agent); a != "" {
		who = append(who, "agent "+a)
	}
	if p := oneLine(o.Project); p != "" {
		who = append(who, "project "+p)
	}
	if len(who) > 0 {
		fmt.Fprintf(&b, "Task run by runner (%s).\n\n", strings.Join(who, ", "))
	}
	fmt.Fprintf(&b, "Runner-Task: %s\n", o.TaskID)
	return b.String()
}
