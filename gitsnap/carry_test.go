package gitsnap

import (
	"context"
	"errors"
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
