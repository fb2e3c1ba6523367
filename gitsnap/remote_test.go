package gitsnap

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/sshtest"
	"github.com/runner-cli/runner/internal/transport"
)

// TestTakeOverSSH takes a snapshot of a work tree through a real sshd on
// loopback: git runs there (env and git -C), the temporary index is made
// and removed there, and the result is the tree a local snapshot of the
// same state records; the user's index, HEAD, refs, stash and files are
// untouched. The directory's name is hostile to a shell.
func TestTakeOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	via := &transport.SSH{Destination: sshtest.Alias, Args: srv.SSHArgs(), ControlDir: t.TempDir()}
	if err := via.Prepare(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = via.Exit()
	})
	parent := t.TempDir()
	dir := filepath.Join(parent, `it's $(touch PWNED) "x"`)
	if err := exec.Command("mkdir", dir).Run(); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "init", "-q")
	write(t, dir, "a.txt", "one\n")
	write(t, dir, "b.txt", "two\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "initial")
	write(t, dir, "a.txt", "one, changed\n")
	write(t, dir, "new.txt", "untracked\n")
	write(t, dir, "staged.txt", "staged\n")
	gitT(t, dir, "add", "staged.txt")
	before := captureState(t, dir)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	there := On(ctx, via)
	remote, err := Take(there, dir, Options{ID: "t_remote", Label: "over ssh"})
	if err != nil {
		t.Fatal(err)
	}
	local, err := Take(ctx, dir, Options{ID: "t_local"})
	if err != nil {
		t.Fatal(err)
	}
	if remote.Tree != local.Tree || !remote.Dirty || remote.Counts != local.Counts {
		t.Fatalf("over ssh: tree %s dirty %v counts %+v; here: tree %s counts %+v", remote.Tree, remote.Dirty, remote.Counts, local.Tree, local.Counts)
	}
	if got := gitT(t, dir, "rev-parse", RefPrefix+"t_remote"); got != remote.Commit {
		t.Fatalf("ref %s is %s, want %s", RefPrefix+"t_remote", got, remote.Commit)
	}
	if remote.Label != "over ssh" || remote.Base != gitT(t, dir, "rev-parse", "HEAD") {
		t.Fatalf("snapshot read %+v", remote)
	}
	assertSameState(t, before, captureState(t, dir))
	for _, d := range []string{parent, dir} {
		if _, err := os.Stat(filepath.Join(d, "PWNED")); err == nil {
			t.Fatalf("a shell ran the directory's name: %s/PWNED exists", d)
		}
	}

	// Commit, there: the task's changes on the current branch, the index
	// there updated under its lock (nothing left staged or unstaged).
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "before the task")
	if _, err := Take(there, dir, Options{ID: "t_commit"}); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "task.txt", "the task's work\n")
	res, err := Commit(there, dir, CommitOptions{TaskID: "t_commit", Task: "do the work"})
	if err != nil || res.Outcome != Committed {
		t.Fatalf("commit over ssh: %+v, %v", res, err)
	}
	if head := gitT(t, dir, "rev-parse", "HEAD"); head != res.Commit {
		t.Fatalf("HEAD %s, commit %s", head, res.Commit)
	}
	if msg := gitT(t, dir, "log", "-1", "--format=%B"); !strings.Contains(msg, "Runner-Task: t_commit") {
		t.Fatalf("message %q", msg)
	}
	if st := gitT(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("after the commit there: %q", st)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
		t.Fatal("index.lock left behind")
	}

	// Not a repository, there: ErrNotRepo.
	if _, err := Take(there, t.TempDir(), Options{ID: "t_none"}); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("a directory that is no repository, over ssh: %v", err)
	}
}

// TestMergeForecastOverSSH forecasts, through a real sshd on loopback, the
// merges of two task branches whose worktrees hold uncommitted changes to
// one file, in a directory whose name is hostile to a shell: the pair
// conflict found there is the one found here, and nothing of the user's
// or the tasks' changed.
func TestMergeForecastOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	via := &transport.SSH{Destination: sshtest.Alias, Args: srv.SSHArgs(), ControlDir: t.TempDir()}
	if err := via.Prepare(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = via.Exit() })
	parent := t.TempDir()
	dir := filepath.Join(parent, `it's $(touch PWNED) "x"`)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "init", "-q")
	write(t, dir, "a.txt", "a\n")
	commitAll(t, dir, "initial")
	var branches []ForecastBranch
	for _, id := range []string{"t_ssh1", "t_ssh2"} {
		wt, snap := taskWorktree(t, dir, id)
		write(t, wt, "a.txt", "a\n"+id+"\n")
		branches = append(branches, ForecastBranch{Branch: BranchPrefix + id, Worktree: wt, Base: snap.Ref})
	}
	before := map[string]string{dir: frozen(t, dir)}
	for _, b := range branches {
		before[b.Worktree] = frozen(t, b.Worktree)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	there, err := MergeForecast(On(ctx, via), dir, "", branches)
	if err != nil {
		t.Fatal(err)
	}
	here, err := MergeForecast(ctx, dir, "", branches)
	if err != nil {
		t.Fatal(err)
	}
	want := []PairConflict{{Branch: "runner/t_ssh2", Files: []string{"a.txt"}}}
	if !reflect.DeepEqual(there, here) || !reflect.DeepEqual(there.Branches[0].With, want) {
		t.Fatalf("over ssh %+v; here %+v", there, here)
	}
	for d, want := range before {
		if got := frozen(t, d); got != want {
			t.Errorf("the forecast over ssh changed %s:\n%s\n->\n%s", d, want, got)
		}
	}
	if _, err := os.Stat(filepath.Join(parent, "PWNED")); err == nil {
		t.Fatal("a shell ran the directory's name")
	}
}
