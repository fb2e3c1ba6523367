package remote

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/state"
)

// localConn is a host that is this machine: its commands run here.
type localConn struct{}

func (localConn) Host() *state.Host { return &state.Host{Name: "here"} }
func (localConn) Run(ctx context.Context, argv ...string) (string, error) {
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
	return string(out), err
}

// TestWorktreeThere: a worktree under the repository's git directory is
// bound writable again with its own git directory, what in that says
// what git runs read-only after (config.worktree made first), and its .git
// file; a folder outside the git directory gives nothing, and a host that
// does not answer is an error naming it.
func TestWorktreeThere(t *testing.T) {
	repo := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	git(repo, "init", "-q", "-b", "main")
	git(repo, "commit", "-q", "--allow-empty", "-m", "one")
	common := filepath.Join(repo, ".git")
	wt := filepath.Join(common, "runner-worktrees", "t_wt000001")
	git(repo, "worktree", "add", "-q", "-b", "runner/t_wt000001", wt)
	gd := filepath.Join(common, "worktrees", "t_wt000001")

	open, ro, err := worktreeThere(t.Context(), localConn{}, wt, common)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(open, []string{wt, gd}) {
		t.Errorf("open %q, want %q", open, []string{wt, gd})
	}
	for _, p := range []string{filepath.Join(gd, "config.worktree"), filepath.Join(gd, "hooks"), filepath.Join(gd, "gitdir"), filepath.Join(wt, ".git")} {
		if !slices.Contains(ro, p) {
			t.Errorf("%s not read-only: %q", p, ro)
		}
	}
	if _, err := os.Stat(filepath.Join(gd, "config.worktree")); err != nil {
		t.Errorf("config.worktree not made first: %v", err)
	}
	if open, ro, err := worktreeThere(t.Context(), localConn{}, repo, common); err != nil || open != nil || ro != nil {
		t.Errorf("the main tree: %q, %q, %v", open, ro, err)
	}
	down := box(answer{key: "gitdir", err: errors.New("host box (u@box): host unreachable")})
	if _, _, err := worktreeThere(t.Context(), down, wt, common); err == nil || !strings.Contains(err.Error(), "on host box: host box (u@box): host unreachable") {
		t.Errorf("host down: %v", err)
	}
}
