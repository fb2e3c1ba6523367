package remote

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/state"
)

// openWorktree binds task t's worktree, when it lies under the read-only
// worktree folder of the host's git directory gitCommon (a group's
// candidate, --worktree), writable again in spec with its own git
// directory (worktreeThere); nothing for another folder or no repository.
func openWorktree(ctx context.Context, c Conn, t *state.Task, gitCommon string, spec *sandbox.Spec) error {
	if gitCommon == "" {
		return nil
	}
	open, ro, err := worktreeThere(ctx, c, t.Dir, gitCommon)
	if err != nil {
		return fmt.Errorf("task %s: %w", t.ID, err)
	}
	spec.Open = append(spec.Open, open...)
	spec.OpenRO = append(spec.OpenRO, ro...)
	return nil
}

// worktreeThere is, for a task whose folder dir is a worktree under the
// host's git directory gitCommon (a group's candidate, --worktree), what
// its sandbox binds writable again over the read-only worktree folder
// (open: the worktree, and its own git directory under worktrees/: index,
// HEAD) and read-only after them (ro: what in that git directory says
// what git runs or where the repository is, made first when missing, and
// the worktree's .git file), as here (confine.SpecFor); one round trip.
// A folder that is not such a worktree gives none.
func worktreeThere(ctx context.Context, c Conn, dir, gitCommon string) (open, ro []string, err error) {
	if !strings.HasPrefix(dir, gitCommon+"/") {
		return nil, nil, nil
	}
	dirs, files := gitsnap.ControlFiles(false)
	const script = `gd=$(sed -n 's/^gitdir: //p' "$1/.git" 2>/dev/null); case $gd in /*) ;; *) exit 0;; esac
cd "$gd" || exit 0; shift; for d do mkdir -p -- "$d" 2>/dev/null; done
[ -e config.worktree ] || [ -L config.worktree ] || : > config.worktree
printf '%s' "$gd"`
	out, err := c.Run(ctx, append([]string{"sh", "-c", script, "sh", dir}, dirs...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("the worktree %s on host %s: %w", dir, c.Host().Name, err)
	}
	open = []string{dir}
	gd := path.Clean(strings.TrimSpace(out))
	worktrees := path.Join(gitCommon, "worktrees")
	if path.IsAbs(gd) && sandbox.Within(gd, worktrees) && gd != worktrees {
		open = append(open, gd)
		for _, n := range append(dirs, files...) {
			ro = append(ro, path.Join(gd, n))
		}
	}
	return open, append(ro, path.Join(dir, ".git")), nil
}
