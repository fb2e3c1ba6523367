package gitsnap

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// BranchPrefix starts the branch of every task worktree: runner/<task id>.
const BranchPrefix = "runner/"

// ErrConflict is wrapped when a merge would conflict; nothing was changed.
var ErrConflict = errors.New("the merge conflicts")

// ErrNoBranch is wrapped when a branch given by name does not exist.
var ErrNoBranch = errors.New("no such branch")

// ErrLocalChanges is wrapped when the target work tree has local changes
// in the paths a merge would touch; nothing was changed.
var ErrLocalChanges = errors.New("local changes in the paths the merge touches")

// WorktreeAdd makes a new work tree at path on a new branch that starts at
// commit from (a task's snapshot: the user's work tree as it was, with its
// uncommitted and untracked files), for the repository containing dir. The
// user's work tree, index, HEAD and stash are not touched. Adds in one
// repository are serialised by a lock file in its common git directory, so
// tasks started at once do not trip over git's own locks. An existing
// branch is ErrExists.
func WorktreeAdd(ctx context.Context, dir, path, branch, from string) error {
	r, err := open(ctx, dir)
	if err != nil {
		return err
	}
	if _, err := r.git(ctx, "rev-parse", "-q", "--verify", "refs/heads/"+branch); err == nil {
		return fmt.Errorf("branch %s: %w", branch, ErrExists)
	}
	common, err := r.git(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return fmt.Errorf("worktree for %s: %w", branch, err)
	}
	lock, err := acquireLock(ctx, r.fs, filepath.Join(trimOut(common), "runner-worktree.lock"))
	if err != nil {
		return err
	}
	defer func() { _ = r.fs.remove(context.WithoutCancel(ctx), lock) }()
	if err := r.fs.mkdirAll(ctx, filepath.Dir(path)); err != nil {
		return fmt.Errorf("worktree for %s: %w", branch, err)
	}
	if _, err := r.git(ctx, "worktree", "add", "--quiet", "-b", branch, path, from); err != nil {
		return fmt.Errorf("git worktree add %s (branch %s at %s): %w", path, branch, shortID(from), err)
	}
	return nil
}

// WorktreeHome is where runner keeps the task worktrees of the repository
// containing dir: runner-worktrees in its (common) git directory. Inside
// the project folder, so an agent CLI that trusts the project and its
// subfolders (Claude Code and Gemini CLI walk up to a trusted ancestor)
// does not ask again for each worktree; inside .git, so git status, file
// watchers and test runners, which all skip .git, never see them.
func WorktreeHome(ctx context.Context, dir string) (string, error) {
	common, err := CommonDir(ctx, dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(common, WorktreeHomeName), nil
}

// CommonDir returns the common git directory of the repository containing
// dir (its .git, also for a linked worktree or a folder inside the work
// tree): where its objects and refs are, which a commit writes.
func CommonDir(ctx context.Context, dir string) (string, error) {
	r, err := open(ctx, dir)
	if err != nil {
		return "", err
	}
	common, err := r.git(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("the git directory of %s: %w", dir, err)
	}
	return trimOut(common), nil
}

// WorktreeHomeName is the name of WorktreeHome's folder in the git
// directory.
const WorktreeHomeName = "runner-worktrees"

// WorktreeRemove removes the work tree at path (forced: its changes are on
// its branch or deliberately dropped by the caller) and prunes git's record
// of work trees whose directory is gone. The branch stays.
func WorktreeRemove(ctx context.Context, dir, path string) error {
	r, err := open(ctx, dir)
	if err != nil {
		return err
	}
	if there, err := r.fs.existing(ctx, path); err == nil && there[0] {
		if _, err := r.git(ctx, "worktree", "remove", "--force", path); err != nil {
			return fmt.Errorf("git worktree remove %s: %w", path, err)
		}
	}
	if _, err := r.git(ctx, "worktree", "prune"); err != nil {
		return fmt.Errorf("git worktree prune: %w", err)
	}
	return nil
}

// Worktree is one work tree of a repository, as git lists it.
type Worktree struct {
	Path   string `json:"path"`
	Branch string `json:"branch,omitempty"` // without refs/heads/
	Head   string `json:"head,omitempty"`
	// Prunable is set when the directory is gone.
	Prunable bool `json:"prunable,omitempty"`
}

// Worktrees lists the work trees of the repository containing dir whose
// branch starts with prefix ("" for all), from git's own list: the ones
// runner made are found even if runner's state lost track of them.
func Worktrees(ctx context.Context, dir, prefix string) ([]Worktree, error) {
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	out, err := r.git(ctx, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, fmt.Errorf("git worktree list: %w", err)
	}
	var list []Worktree
	var cur *Worktree
	for _, l := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(l, " ")
		switch k {
		case "worktree":
			list = append(list, Worktree{Path: v})
			cur = &list[len(list)-1]
		case "HEAD":
			if cur != nil {
				cur.Head = v
			}
		case "branch":
			if cur != nil {
				cur.Branch = strings.TrimPrefix(v, "refs/heads/")
			}
		case "prunable":
			if cur != nil {
				cur.Prunable = true
			}
		}
	}
	var out2 []Worktree
	for _, w := range list {
		if strings.HasPrefix(w.Branch, prefix) {
			out2 = append(out2, w)
		}
	}
	return out2, nil
}

// MergeOptions tune Merge.
type MergeOptions struct {
	// Base is the commit the branch started from (the task's snapshot):
	// only the commits after it are merged, so the user's uncommitted
	// work it carried is not merged back.
	Base string
	// Squash makes one commit of the branch's changes; Rebase puts them
	// on the target and fast-forwards it; neither: a merge commit.
	Squash, Rebase bool
	// Message is the commit message of the merge or squash commit.
	Message string
	// Into is the target branch: "" for the branch checked out in dir. A
	// branch checked out in another work tree is merged there; one checked
	// out nowhere, in a temporary work tree removed after; one that does not
	// exist is ErrNoBranch.
	Into string
}

// MergeResult says what Merge did.
type MergeResult struct {
	Branch string `json:"branch"`
	Into   string `json:"into"`
	Commit string `json:"commit"` // the target's new tip
	Mode   string `json:"mode"`   // "merge", "squash" or "rebase"
	// UpToDate is set when the branch had nothing the target lacks.
	UpToDate bool `json:"up_to_date,omitempty"`
}

// ConflictError lists the files a merge conflicts on. It wraps ErrConflict.
type ConflictError struct {
	Branch, Into string
	Files        []string
	// Worktree and Base say how to resolve by hand: rebase the branch's
	// commits after Base onto Into in Worktree.
	Worktree, Base string
}

// Error names the files and says how to resolve by hand.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("merging %s into %s conflicts in %s; nothing was changed (to resolve by hand: cd %s && git rebase --onto %s %s, fix the files, git add them, git rebase --continue; then merge again)",
		e.Branch, e.Into, strings.Join(e.Files, ", "), e.Worktree, e.Into, shortID(e.Base))
}

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// Merge merges branch, checked out in the work tree wt, into the branch
// checked out in the work tree containing dir. First the branch's commits
// after opts.Base are rebased onto the target's tip in wt: a conflict
// aborts that rebase (wt as it was) and is a *ConflictError naming the
// files. Then the target takes them: a merge commit, a squash commit, or
// a fast-forward (opts.Rebase). Local changes in the target's work tree in
// the paths this touches refuse with ErrLocalChanges before anything
// changes; other local changes stay as they are.
func Merge(ctx context.Context, dir, wt, branch string, opts MergeOptions) (*MergeResult, error) {
	if opts.Into != "" {
		target, cleanup, err := intoWorktree(ctx, dir, opts.Into)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		dir, opts.Into = target, ""
	}
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if r.headRef == "" {
		return nil, fmt.Errorf("merge %s: %w (switch %s to a branch first)", branch, ErrDetachedHead, r.top)
	}
	if p := r.inProgress(ctx); p != "" {
		return nil, fmt.Errorf("merge %s into %s: a %s is in progress there: %w", branch, r.branch(), p, ErrInProgress)
	}
	into := r.branch()
	res := &MergeResult{Branch: branch, Into: into, Mode: "merge"}
	switch {
	case opts.Squash:
		res.Mode = "squash"
	case opts.Rebase:
		res.Mode = "rebase"
	}
	w, err := open(ctx, wt)
	if err != nil {
		return nil, fmt.Errorf("the task's work tree %s: %w", wt, err)
	}
	if err := rebaseOnto(ctx, w, r.head, opts.Base, branch, into); err != nil {
		return nil, err
	}
	changed, err := r.git(ctx, "diff", "--name-only", r.head, branch)
	if err != nil {
		return nil, fmt.Errorf("merge %s: %w", branch, err)
	}
	paths := strings.Fields(string(changed))
	if len(paths) == 0 {
		res.UpToDate, res.Commit = true, r.head
		return res, nil
	}
	local, err := r.git(ctx, append([]string{"status", "--porcelain", "--untracked-files=all", "--"}, paths...)...)
	if err != nil {
		return nil, fmt.Errorf("merge %s: %w", branch, err)
	}
	if l := strings.TrimSpace(string(local)); l != "" {
		return nil, fmt.Errorf("merge %s into %s: %w: %s (commit or stash them, then merge again)", branch, into, ErrLocalChanges, strings.Join(strings.Fields(l), " "))
	}
	msg := opts.Message
	if msg == "" {
		msg = "Merge " + branch
	}
	switch res.Mode {
	case "rebase":
		_, err = r.git(ctx, "merge", "--quiet", "--ff-only", branch)
	case "squash":
		if _, err = r.git(ctx, "merge", "--quiet", "--squash", branch); err == nil {
			_, err = r.git(ctx, "commit", "--quiet", "-m", msg)
		}
	default:
		_, err = r.git(ctx, "merge", "--quiet", "--no-ff", "-m", msg, branch)
	}
	if err != nil {
		return nil, fmt.Errorf("merge %s into %s: %w", branch, into, err)
	}
	tip, err := r.git(ctx, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	res.Commit = trimOut(tip)
	return res, nil
}

// rebaseOnto puts branch's commits since base (its snapshot; or, when the
// branch was rebased by hand since, since it left the target) on top of
// target in the branch's work tree w. A conflict aborts the rebase, leaving
// w as it was, and is a *ConflictError.
func rebaseOnto(ctx context.Context, w *repo, target, base, branch, into string) error {
	if _, err := w.git(ctx, "merge-base", "--is-ancestor", base, branch); base == "" || err != nil {
		mb, err := w.git(ctx, "merge-base", target, branch)
		if err != nil {
			return fmt.Errorf("merge %s: no common history with %s: %w", branch, into, err)
		}
		base = trimOut(mb)
	}
	if _, err := w.git(ctx, "rebase", "--quiet", "--onto", target, base, branch); err != nil {
		files := conflictFiles(ctx, w)
		_, _ = w.git(context.WithoutCancel(ctx), "rebase", "--abort")
		if len(files) > 0 {
			return &ConflictError{Branch: branch, Into: into, Files: files, Worktree: w.top, Base: base}
		}
		return fmt.Errorf("rebase %s onto %s: %w", branch, into, err)
	}
	return nil
}

// intoWorktree finds the work tree where branch into is checked out, or
// makes a temporary one for it (removed by cleanup).
func intoWorktree(ctx context.Context, dir, into string) (string, func(), error) {
	r, err := open(ctx, dir)
	if err != nil {
		return "", nil, err
	}
	if _, err := r.git(ctx, "rev-parse", "-q", "--verify", "refs/heads/"+into); err != nil {
		return "", nil, fmt.Errorf("merge into %s: %w", into, ErrNoBranch)
	}
	list, err := Worktrees(ctx, dir, "")
	if err != nil {
		return "", nil, err
	}
	for _, w := range list {
		if w.Branch == into && !w.Prunable {
			return w.Path, func() {}, nil
		}
	}
	home, err := WorktreeHome(ctx, dir)
	if err != nil {
		return "", nil, err
	}
	tmp := filepath.Join(home, "_into-"+strings.ReplaceAll(into, "/", "_")+"-"+NewID())
	if _, err := r.git(ctx, "worktree", "add", "--quiet", tmp, into); err != nil {
		return "", nil, fmt.Errorf("merge into %s: a work tree to merge in: %w", into, err)
	}
	return tmp, func() { _ = WorktreeRemove(context.WithoutCancel(ctx), dir, tmp) }, nil
}

// conflictFiles lists the unmerged paths of the work tree of r.
func conflictFiles(ctx context.Context, r *repo) []string {
	out, err := r.git(ctx, "diff", "--name-only", "--diff-filter=U")
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}

// BranchMerged reports whether nothing of branch after base is missing
// from the branch checked out in the work tree containing dir: it has no
// commits after base, or merging it would not change that branch's tree
// (merged, squashed or rebased alike).
func BranchMerged(ctx context.Context, dir, branch, base string) (bool, error) {
	r, err := open(ctx, dir)
	if err != nil {
		return false, err
	}
	if base != "" {
		out, err := r.git(ctx, "rev-list", "--count", base+".."+branch)
		if err != nil {
			return false, fmt.Errorf("git rev-list %s: %w", branch, err)
		}
		if trimOut(out) == "0" {
			return true, nil
		}
	}
	out, err := r.git(ctx, "merge-tree", "--write-tree", "HEAD", branch)
	if err != nil {
		return false, nil // it conflicts: certainly not merged
	}
	tree := strings.SplitN(trimOut(out), "\n", 2)[0]
	return tree == r.headTree, nil
}

func shortID(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// DeleteBranch deletes branch from the repository containing dir, whether
// merged or not: the caller decides (runner gc deletes a merged task
// branch, or any with --force-worktrees).
func DeleteBranch(ctx context.Context, dir, branch string) error {
	r, err := open(ctx, dir)
	if err != nil {
		return err
	}
	if _, err := r.git(ctx, "branch", "-D", "--", branch); err != nil {
		return fmt.Errorf("git branch -D %s: %w", branch, err)
	}
	return nil
}

// Dirty reports whether the work tree containing dir has changes of any
// kind: staged, unstaged, or untracked files that are not ignored.
func Dirty(ctx context.Context, dir string) (bool, error) {
	r, err := open(ctx, dir)
	if err != nil {
		return false, err
	}
	out, err := r.git(ctx, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return false, fmt.Errorf("git status in %s: %w", dir, err)
	}
	return len(strings.TrimSpace(string(out))) > 0, nil
}
