package untrusted

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOpenFileBlocking: a file opened is in blocking mode and outside the
// runtime's poller (as os.OpenFile leaves a regular file), written and
// read as any; a missing one is an *os.PathError of open.
func TestOpenFileBlocking(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	f, err := OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.SetDeadline(time.Time{}); !errors.Is(err, os.ErrNoDeadline) {
		t.Errorf("SetDeadline: %v, want os.ErrNoDeadline (not in the poller)", err)
	}
	if nb := nonblocking(t, f); nb {
		t.Error("the file is in non-blocking mode")
	}
	f.Close()
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	r, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	if n, err := r.Read(b); err != nil || string(b[:n]) != "one\n" {
		t.Errorf("read %q, %v", b[:n], err)
	}
	r.Close()
	_, err = Open(p + ".missing")
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Op != "open" || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want an *os.PathError of open wrapping os.ErrNotExist", err)
	}
}

// nonblocking reports whether f's descriptor has O_NONBLOCK.
func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	_ = rc.Control(func(fd uintptr) {
		flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0)
	})
	if ferr != nil {
		t.Fatal(ferr)
	}
	return flags&syscall.O_NONBLOCK != 0
}
