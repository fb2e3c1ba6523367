// Package privdir finds directories that only this user can reach, for
// what runner's processes share on one machine: the tmux client slots, the
// start slots, ssh control sockets, the hand-over files of pane
// environments.
//
// A directory in a shared temporary directory (/tmp) can be made first by
// another user, or be a symlink to one of theirs: os.MkdirAll accepts
// both. Here a directory is used only if it is a real directory (not a
// symlink), owned by this user, with no access for group or others, and
// each of its parents below the base is checked the same way. The base is
// $XDG_RUNTIME_DIR when it is set and private itself (systemd makes it
// 0700, per user, on a tmpfs), else the temporary directory, where names
// carry the uid.
//
// When no private place can be had, Dir returns an error; callers go
// without what needed it (a bound, a shared connection) and Dir says so
// once per name on Warnings.
package privdir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Warnings receives the one line said when a private directory cannot be
// had (once per name and process). Tests may set it to io.Discard.
var Warnings io.Writer = os.Stderr

var (
	mu     sync.Mutex
	made   map[string]string // made on first use: a map literal here is built in every process's init
	warned map[string]bool
)

// Dir returns the private directory "runner-NAME" (made if missing, mode
// 0700) under $XDG_RUNTIME_DIR, or "runner-NAME-UID" under the temporary
// directory, then the sub-directories sub below it. It checks every
// directory it returns or passes through below the base (see the package
// doc); a failed check is an error naming the directory and its owner.
// Results are remembered per process and base, as long as the directory
// is there: one removed meanwhile (a cleaner of /tmp, on a machine up for
// weeks, under a supervisor or server that lives as long) is made and
// checked again.
func Dir(name string, sub ...string) (string, error) {
	base, runtime := Base(os.Getenv)
	key := filepath.Join(append([]string{base, name}, sub...)...)
	mu.Lock()
	defer mu.Unlock()
	if d, ok := made[key]; ok {
		if _, err := os.Lstat(d); err == nil {
			return d, nil
		}
		delete(made, key)
	}
	d, err := dirIn(base, runtime, name, sub...)
	if err != nil {
		if !warned[name] {
			if warned == nil {
				warned = map[string]bool{}
			}
			warned[name] = true
			fmt.Fprintf(Warnings, "runner: warning: %v; going without it (set XDG_RUNTIME_DIR or TMPDIR to a directory of your own)\n", err)
		}
		return "", err
	}
	if made == nil {
		made = map[string]string{}
	}
	made[key] = d
	return d, nil
}

// Base returns where private directories go: $XDG_RUNTIME_DIR (runtime
// true) when it is an absolute path to a private directory of this user,
// else the temporary directory, shared with other users.
func Base(getenv func(string) string) (base string, runtime bool) {
	if x := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) && Check(x) == nil {
		return x, true
	}
	return os.TempDir(), false
}

// dirIn makes and checks base/runner-NAME/sub… (runner-NAME-UID in a
// shared base).
func dirIn(base string, runtime bool, name string, sub ...string) (string, error) {
	top := "runner-" + name
	if !runtime {
		top += "-" + strconv.Itoa(os.Getuid())
	}
	d := filepath.Join(base, top)
	if err := Ensure(d); err != nil {
		return "", err
	}
	for _, s := range sub {
		d = filepath.Join(d, s)
		if err := Ensure(d); err != nil {
			return "", err
		}
	}
	return d, nil
}

// Ensure makes dir (mode 0700) if it is missing, its parent existing, and
// checks it as Check does.
func Ensure(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("private directory %s: %w", dir, err)
	}
	return Check(dir)
}

// ErrNotPrivate is wrapped by Check's errors about who owns a directory or
// may enter it.
var ErrNotPrivate = errors.New("not a private directory")

// Check reports whether dir is a directory (not a symlink) of this user's
// that group and others cannot enter or change.
func Check(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("private directory %s: %w", dir, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("private directory %s: %w: it is a symbolic link", dir, ErrNotPrivate)
	}
	if !fi.IsDir() {
		return fmt.Errorf("private directory %s: %w: it is not a directory", dir, ErrNotPrivate)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("private directory %s: %w: its owner cannot be read", dir, ErrNotPrivate)
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("private directory %s: %w: it belongs to uid %d, not to this user (uid %d)", dir, ErrNotPrivate, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("private directory %s: %w: its mode is %04o, not 0700", dir, ErrNotPrivate, fi.Mode().Perm())
	}
	return nil
}

// OpenFlags are the flags to open a file in a private directory with:
// never through a symbolic link.
const OpenFlags = syscall.O_NOFOLLOW | syscall.O_CLOEXEC
