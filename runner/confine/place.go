package confine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/sandbox"
)

// A sandbox binds paths by name, and bwrap follows every link in a name
// when it binds it: a folder whose path an agent can change (a child's,
// inside its parent's folder) could be bound as somewhere else than the
// dispatch checked. So a child dispatched through a door has its folder
// recorded resolved, and every start checks again, just before the
// sandbox is made, that no part of the path is a link (NoLinks) and that
// the git directory the sandbox would make writable is the one the
// dispatch checked or lies in the task's folder (CheckPlace). What is left
// is the moment between that check and bwrap's bind (the pane is started
// by the tmux server: no descriptor can be handed to bwrap there).

// NoLinks reports an error unless p, absolute and clean, names a place
// that exists with no link anywhere in its path (each part Lstat'ed from
// the root).
func NoLinks(p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("%q is not an absolute, clean path", p)
	}
	cur := "/"
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a link", cur)
		}
	}
	return nil
}

// Real is p with every link resolved, or p cleaned where it cannot be
// resolved (it does not exist).
func Real(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// CheckPlace holds a sandboxed task's start to what its dispatch checked:
// within (a child's parent's folder, resolved; "" for a task dispatched
// from outside) holds dir, the task's folder, with no link in its path
// (a worktree of the repository, in its runner-worktrees folder, too);
// and common, the git directory the sandbox would make writable (resolved;
// "" for none), is gitCommon (the dispatch's, resolved) or inside the
// task's folder. An error says why the sandbox is not made.
func CheckPlace(dir, common, within, gitCommon string) error {
	if within != "" {
		inWorktrees := gitCommon != "" && sandbox.Within(dir, filepath.Join(gitCommon, gitsnap.WorktreeHomeName))
		if !sandbox.Within(dir, within) && !inWorktrees {
			return fmt.Errorf("sandbox: the folder %s is not inside %s, where its dispatch checked it", dir, within)
		}
		if err := NoLinks(dir); err != nil {
			return fmt.Errorf("sandbox: the folder %s is not where its dispatch checked it: %w", dir, err)
		}
	}
	if common == "" {
		return nil
	}
	if common != gitCommon && !sandbox.Within(common, Real(dir)) {
		return fmt.Errorf("sandbox: the git directory %s is neither inside the task's folder %s nor the one its dispatch checked (%s): not made writable", common, dir, orNone(gitCommon))
	}
	if within != "" {
		if err := NoLinks(common); err != nil {
			return fmt.Errorf("sandbox: the git directory %s: %w", common, err)
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
