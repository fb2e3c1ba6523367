// Package untrusted opens what an agent can name or write: a transcript
// path in a hook event, a session's file, the task's own transcript. Such
// a file is read only when it is a regular file, opened not through a
// final symbolic link and without blocking (a FIFO or a device put in its
// place is refused at once, never waited on), and a name taken from the
// agent's words is used in a path only when it cannot leave its folder.
package untrusted

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/runner-cli/runner/internal/textutil"
)

// ErrNotRegular is wrapped when the file is a link, a FIFO, a device or a
// directory.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading if it is a regular file (see the package
// doc).
func Open(path string) (*os.File, error) { return OpenFile(path, os.O_RDONLY, 0) }

// OpenFile is os.OpenFile with the package's rules: not through a final
// link, never blocking, a regular file only (a FIFO with no reader, opened
// for writing, is refused as well).
//
// The file is opened without the Go runtime's poller (a regular file is
// never pollable: os.OpenFile's try of it cost four system calls a file,
// and a hook the poller's start, issue 51): blocking once checked.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := syscall.Open(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, uint32(perm.Perm()))
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, uint32(perm.Perm()))
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("open %s: %w: a symbolic link", path, ErrNotRegular)
		}
		if errors.Is(err, syscall.ENXIO) {
			return nil, fmt.Errorf("open %s: %w: a FIFO or a socket", path, ErrNotRegular)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	// Blocking again before os.NewFile looks (a file in non-blocking mode
	// is handed to the poller); what is not a regular file is closed below
	// unread.
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
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

// Name reports whether s, a name an agent's CLI gave (a session id), can
// be used as part of a file name: letters, digits, '.', '_', ':' and '-',
// no "..", no separator.
func Name(s string) bool {
	return textutil.IsName(s, 200, true, "._:-") && !strings.Contains(s, "..")
}
