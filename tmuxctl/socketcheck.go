package tmuxctl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrUnsafeSocket is wrapped when a tmux socket given as a path is not
// one runner may talk to: a tmux server can order its client to run a
// program and to read and write files as the client, so runner connects
// only to a server of the user's own, in a folder nobody else can change.
var ErrUnsafeSocket = errors.New("not a tmux socket runner may use")

// CheckSocket checks a tmux server's socket path (for -S) before a tmux
// client connects to it: when the socket exists, it is a socket (not a
// link) of this user's; its folder is a real folder (not a link) of this
// user's or root's that group and others cannot write (a sticky folder
// such as /tmp may be written by others, who cannot replace what is
// this user's). A missing socket (tmux makes it) is checked by its
// folder alone.
func CheckSocket(path string) error {
	if !filepath.IsAbs(path) {
		// Relative to wherever runner happens to run: as with a
		// sandboxed task's folder, a place runner does not choose.
		return fmt.Errorf("tmux socket %s: %w: give an absolute path", path, ErrUnsafeSocket)
	}
	path = filepath.Clean(path)
	uid := uint32(os.Geteuid())
	dir := filepath.Dir(path)
	di, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("tmux socket %s: its folder: %w", path, err)
	}
	if err := safeDir(dir, di, uid); err != nil {
		return fmt.Errorf("tmux socket %s: %w: %v", path, ErrUnsafeSocket, err)
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tmux socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("tmux socket %s: %w: it is a %s, not a socket", path, ErrUnsafeSocket, kind(fi))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != uid {
		return fmt.Errorf("tmux socket %s: %w: it belongs to uid %d, not to you (%d)", path, ErrUnsafeSocket, st.Uid, uid)
	}
	return nil
}

// safeDir reports why dir (its Lstat di) is not a folder only uid (or
// root) can change.
func safeDir(dir string, di fs.FileInfo, uid uint32) error {
	if !di.IsDir() {
		return fmt.Errorf("its folder %s is a %s", dir, kind(di))
	}
	st, ok := di.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if st.Uid != uid && st.Uid != 0 {
		return fmt.Errorf("its folder %s belongs to uid %d, not to you (%d) or root", dir, st.Uid, uid)
	}
	if di.Mode().Perm()&0o022 != 0 && di.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("its folder %s can be written by others (mode %v)", dir, di.Mode().Perm())
	}
	return nil
}

func kind(fi fs.FileInfo) string {
	switch t := fi.Mode().Type(); {
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	case t.IsDir():
		return "folder"
	case t == 0:
		return "regular file"
	default:
		return strings.TrimSpace(t.String())
	}
}

// WithSocketGuard adds guard to the checks of a socket path (CheckSocket)
// made before this client's first tmux call, given that call's context:
// runner's CLI refuses there a socket inside a folder a sandboxed task may
// write.
func WithSocketGuard(guard func(ctx context.Context, path string) error) Option {
	return func(c *Client) { c.guard = guard }
}

// checkSocket runs CheckSocket and the guard for a local client bound to
// a socket path, once per client while it holds (a failure, or a guard
// whose context ended, is checked again on the next call).
func (c *Client) checkSocket(ctx context.Context) error {
	if c.tr != nil || !strings.Contains(c.socket, "/") {
		return nil
	}
	c.checkMu.Lock()
	defer c.checkMu.Unlock()
	if c.checked {
		return nil
	}
	if err := CheckSocket(c.socket); err != nil {
		return err
	}
	if c.guard != nil {
		err := c.guard(ctx, filepath.Clean(c.socket))
		if ctx.Err() != nil {
			return ctx.Err() // the guard may not have read what it needed
		}
		if err != nil {
			return fmt.Errorf("tmux socket %s: %w: %v", c.socket, ErrUnsafeSocket, err)
		}
	}
	c.checked = true
	return nil
}
