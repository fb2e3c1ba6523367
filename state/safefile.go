package state

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/runner-cli/runner/internal/untrusted"
)

// ErrUntrustedDir is wrapped when the state directory is not the user's
// own and private: runner keeps no state where someone else could change
// it.
var ErrUntrustedDir = errors.New("the state directory is not private to this user")

// ErrNotRegular is wrapped when a file of the state directory is a link,
// a FIFO, a device or a directory where runner keeps a regular file.
var ErrNotRegular = untrusted.ErrNotRegular

// openFile opens a file of the state directory as os.OpenFile does, but
// not through a link, never blocking, and only if it is a regular file
// (internal/untrusted).
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return untrusted.OpenFile(path, flag, perm)
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
