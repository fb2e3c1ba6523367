package gitsnap

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/sshtest"
	"github.com/runner-cli/runner/internal/transport"
)

// TestCarry: a snapshot of one repository carried into a clone of it (only
// what is new since the commit both hold), a second carry changing
// nothing, and a ref there at another commit refused.
func TestCarry(t *testing.T) {
	src := newRepo(t, baseFiles)
	dst := t.TempDir()
	gitT(t, dst, "clone", "-q", src, ".")
	write(t, src, "wip.txt", "the user's own work\n")
	s, err := Take(t.Context(), src, Options{ID: "g_carry01"})
	if err != nil {
		t.Fatal(err)
	}
	ref := CarryRef{Ref: s.Ref, Commit: s.Commit}
	res, err := Carry(t.Context(), src, t.Context(), dst, []CarryRef{ref}, []string{s.Base})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes == 0 || len(res.Set) != 1 {
		t.Fatalf("carried %+v", res)
	}
	back, err := Get(t.Context(), dst, "g_carry01")
	if err != nil || back.Tree != s.Tree {
		t.Fatalf("snapshot there: %+v, %v", back, err)
	}
	if c, err := RefCommit(t.Context(), dst, s.Ref); err != nil || c != s.Commit {
		t.Fatalf("RefCommit = %q, %v", c, err)
	}
	again, err := Carry(t.Context(), src, t.Context(), dst, []CarryRef{ref}, nil)
	if err != nil || again.Bytes != 0 || len(again.Set) != 0 {
		t.Fatalf("second carry: %+v, %v", again, err)
	}
	other := CarryRef{Ref: s.Ref, Commit: s.Base}
	if _, err := Carry(t.Context(), src, t.Context(), dst, []CarryRef{other}, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("a ref at another commit: %v", err)
	}
	if _, err := RefCommit(t.Context(), dst, "refs/heads/nosuch"); err == nil {
		t.Fatal("RefCommit of a missing ref: no error")
	}
}

// TestCarryOverSSH: the pack crosses a real sshd both ways (binary bytes
// on the session shell's stdin and stdout): a snapshot into a fresh
// repository there (no commit in common: the whole history), and a
// branch back.
func TestCarryOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	via := &transport.SSH{Destination: sshtest.Alias, Args: srv.SSHArgs(), ControlDir: t.TempDir()}
	if err := via.Prepare(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = via.Exit() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	there := On(ctx, via)
	src := newRepo(t, baseFiles)
	write(t, src, "wip.txt", "work\n")
	s, err := Take(ctx, src, Options{ID: "g_carry02"})
	if err != nil {
		t.Fatal(err)
	}
	dst := newRepo(t, nil)
	if _, err := Carry(ctx, src, there, dst, []CarryRef{{Ref: s.Ref, Commit: s.Commit}}, []string{s.Base}); err != nil {
		t.Fatal(err)
	}
	gitT(t, dst, "branch", "runner/t_x", s.Commit)
	write(t, dst, "x.txt", "x\n")
	gitT(t, dst, "add", "x.txt")
	gitT(t, dst, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x")
	tip := gitT(t, dst, "rev-parse", "HEAD")
	res, err := Carry(there, dst, ctx, src, []CarryRef{{Ref: "refs/heads/runner/t_x", Commit: tip}}, []string{s.Commit})
	if err != nil || res.Bytes == 0 {
		t.Fatalf("back: %+v, %v", res, err)
	}
	if got := gitT(t, src, "rev-parse", "runner/t_x"); got != tip {
		t.Fatalf("branch back at %s, want %s", got, tip)
	}
}

// TestRemoteCreateExcl: the lock file of a repository on a host, made
// once; a second try finds it held (not an error: dash ends the script
// on a failed redirection of ':' unless it runs in a subshell), so two
// worktrees made there at once wait their turn.
func TestRemoteCreateExcl(t *testing.T) {
	fs := remoteFS{transport.Local{}}
	path := t.TempDir() + "/runner-worktree.lock"
	if made, err := fs.createExcl(t.Context(), path); err != nil || !made {
		t.Fatalf("first: %v, %v", made, err)
	}
	if made, err := fs.createExcl(t.Context(), path); err != nil || made {
		t.Fatalf("second: %v, %v (want held, no error)", made, err)
	}
	if _, err := fs.createExcl(t.Context(), t.TempDir()+"/nosuch/lock"); err == nil {
		t.Fatal("a lock in a missing folder: no error")
	}
}

// TestDropRefs: the refs named that are there are deleted and returned,
// one that is not is no error, a ref below a name given is kept, and a
// second drop finds nothing.
func TestDropRefs(t *testing.T) {
	dir := newRepo(t, baseFiles)
	s, err := Take(t.Context(), dir, Options{ID: "g_drop0001"})
	if err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "update-ref", "refs/runner/picked/t_a", s.Commit)
	gitT(t, dir, "update-ref", "refs/runner/picked/t_b/below", s.Commit)
	refs := []string{s.Ref, "refs/runner/picked/t_a", "refs/runner/picked/t_b", "refs/runner/picked/t_none"}
	got, err := DropRefs(t.Context(), dir, refs)
	if err != nil || len(got) != 2 || got[0] != "refs/runner/picked/t_a" && got[1] != "refs/runner/picked/t_a" {
		t.Fatalf("DropRefs = %q, %v", got, err)
	}
	if _, err := Get(t.Context(), dir, "g_drop0001"); err == nil {
		t.Error("the snapshot is still there")
	}
	if _, err := RefCommit(t.Context(), dir, "refs/runner/picked/t_b/below"); err != nil {
		t.Errorf("a ref below a name given was dropped: %v", err)
	}
	if again, err := DropRefs(t.Context(), dir, refs); err != nil || len(again) != 0 {
		t.Errorf("second DropRefs = %q, %v", again, err)
	}
	if none, err := DropRefs(t.Context(), dir, nil); err != nil || none != nil {
		t.Errorf("DropRefs of none = %q, %v", none, err)
	}
}

// TestSameRepository: a repository and itself (through a transport, as a
// host on this machine is) are one; a clone of it is not, nor is one at
// another commit; the probe ref is gone after.
func TestSameRepository(t *testing.T) {
	dir := newRepo(t, baseFiles)
	clone := t.TempDir()
	gitT(t, clone, "clone", "-q", dir, ".")
	there := On(t.Context(), transport.Local{})
	if same, err := SameRepository(t.Context(), dir, there, dir); err != nil || !same {
		t.Errorf("a repository and itself there: %v, %v", same, err)
	}
	if same, err := SameRepository(t.Context(), dir, there, clone); err != nil || same {
		t.Errorf("a clone: %v, %v", same, err)
	}
	write(t, clone, "x.txt", "x\n")
	gitT(t, clone, "add", "x.txt")
	gitT(t, clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x")
	if same, err := SameRepository(t.Context(), dir, t.Context(), clone); err != nil || same {
		t.Errorf("another commit: %v, %v", same, err)
	}
	if out := gitT(t, dir, "for-each-ref", "refs/runner/probe/"); out != "" {
		t.Errorf("probe left: %s", out)
	}
}

// TestRemoteCreateExclRace: two takers of one lock there, each taking it
// and letting it go in turn, never leave it behind: a try that finds it
// held, then gone before it looks again, must not make it while saying
// it did not (the lock left so failed every later worktree there: "exists,
// waited 5s").
func TestRemoteCreateExclRace(t *testing.T) {
	fs := remoteFS{transport.Local{}}
	path := t.TempDir() + "/runner-worktree.lock"
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 60 {
				made, err := fs.createExcl(t.Context(), path)
				if err != nil {
					t.Error(err)
					return
				}
				if made {
					if err := fs.remove(t.Context(), path); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the lock is left with no one holding it")
	}
}
