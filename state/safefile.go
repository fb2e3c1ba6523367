package state

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrUntrustedDir is wrapped when the state directory is not the user's
// own and private: runner keeps no state where someone else could change
// it.
var ErrUntrustedDir = errors.New("the state directory is not private to this user")

// ErrNotRegular is wrapped when a file of the state directory is a link,
// a FIFO, a device or a directory where runner keeps a regular file.
var ErrNotRegular = errors.New("not a regular file")

// safeFlags are added to every open of a file in the state directory:
// never through a symbolic link (the final name), never blocking on a
// FIFO put in a file's place.
const safeFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// openFile opens a file of the state directory as os.OpenFile does, but
// not through a link, and only if it is a regular file.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|safeFlags, perm)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("open %s: %w: it is a symbolic link", path, ErrNotRegular)
		}
		if errors.Is(err, syscall.ENXIO) {
			return nil, fmt.Errorf("open %s: %w: it is a FIFO or a socket", path, ErrNotRegular)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open %s: %w (%s)", path, ErrNotRegular, fi.Mode().Type())
	}
	return f, nil
}

// openRead opens a file of the state directory for reading (see
// openFile).
func openRead(path string) (*os.File, error) { return openFile(path, os.O_RDONLY, 0) }

// readFile reads a whole file of the state directory (see openFile).
func readFile(path string) ([]byte, error) {
	f, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// checkDir holds the state directory dir to being the user's own: a real
// directory (not a link), owned by this user, that neither group nor
// others may change. A missing one is no error (it is made 0700).
func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state directory %s: %w", dir, err)
	}
	fix := fmt.Sprintf("use a directory of your own that only you can change (mkdir -m 700 DIR; export RUNNER_STATE_DIR=DIR), or unset RUNNER_STATE_DIR for the default")
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("state directory %s: %w: it is a symbolic link (%s)", dir, ErrUntrustedDir, fix)
	case !fi.IsDir():
		return fmt.Errorf("state directory %s is not a directory (set RUNNER_STATE_DIR to a directory)", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("state directory %s: %w: it belongs to uid %d, not to you (uid %d) (%s)", dir, ErrUntrustedDir, st.Uid, os.Geteuid(), fix)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("state directory %s: %w: its mode %04o lets others change it (chmod 700 %s, or %s)", dir, ErrUntrustedDir, fi.Mode().Perm(), dir, fix)
	}
	return nil
}
