package tmuxctl

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckSocket: a socket path runner may connect to is this user's
// socket in a folder only the user (or root) can change; a link, a
// regular file, a relative path and a folder others may write are
// refused.
func TestCheckSocket(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "rsc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := CheckSocket(sock); err != nil {
		t.Errorf("a socket of the user's in a 0700 folder: %v", err)
	}
	if err := CheckSocket(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("a socket tmux will make in a 0700 folder: %v", err)
	}
	os.Symlink(sock, filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o600)
	open := filepath.Join(dir, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	sticky := filepath.Join(dir, "sticky")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, 0o777|os.ModeSticky)
	os.Symlink(dir, filepath.Join(dir, "dirlink"))
	for _, p := range []string{filepath.Join(dir, "link"), filepath.Join(dir, "file"), "x.sock", "./d/x.sock",
		filepath.Join(open, "s"), filepath.Join(dir, "dirlink", "s")} {
		if err := CheckSocket(p); !errors.Is(err, ErrUnsafeSocket) {
			t.Errorf("CheckSocket(%s): %v, want ErrUnsafeSocket", p, err)
		}
	}
	if err := CheckSocket(filepath.Join(sticky, "s")); err != nil {
		t.Errorf("a socket to be made in a sticky folder (like /tmp): %v", err)
	}
}

// TestSocketGuard: a client whose socket the guard refuses runs no tmux
// at all (no server is started there) and says why.
func TestSocketGuard(t *testing.T) {
	c := testServer(t)
	refused := New(c.Socket(), WithConfig("/dev/null"), WithSocketGuard(func(_ context.Context, p string) error {
		return errors.New("inside task t_x's folder")
	}))
	_, err := refused.NewSession(context.Background(), WindowSpec{Session: "x", Argv: []string{"sh"}})
	if !errors.Is(err, ErrUnsafeSocket) {
		t.Fatalf("NewSession on a guarded socket: %v, want ErrUnsafeSocket", err)
	}
	if _, err := os.Lstat(c.Socket()); err == nil {
		t.Errorf("a tmux server was started on the refused socket")
	}
}

// TestSocketGuardContext: the guard gets the call's context; a call whose
// context ended before the guard could read what it needed runs no tmux
// and leaves the socket unchecked, so the next call asks the guard again.
func TestSocketGuardContext(t *testing.T) {
	c := testServer(t)
	type key struct{}
	var asked []any
	guarded := New(c.Socket(), WithConfig("/dev/null"), WithSocketGuard(func(ctx context.Context, p string) error {
		asked = append(asked, ctx.Value(key{}))
		return nil
	}))
	ctx, cancel := context.WithCancel(context.WithValue(t.Context(), key{}, "first"))
	cancel()
	if _, err := guarded.NewSession(ctx, WindowSpec{Session: "x", Argv: []string{"sh"}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a call whose context ended: %v, want context.Canceled", err)
	}
	if _, err := os.Lstat(c.Socket()); err == nil {
		t.Errorf("a tmux server was started by a call whose context ended")
	}
	if _, err := guarded.NewSession(context.WithValue(t.Context(), key{}, "second"), WindowSpec{Session: "x", Argv: []string{"sh"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := guarded.ListPanes(context.WithValue(t.Context(), key{}, "third")); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 || asked[0] != "first" || asked[1] != "second" {
		t.Errorf("the guard was asked with %v, want the first two calls' contexts and then no more", asked)
	}
}
