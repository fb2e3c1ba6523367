package state

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestUntrustedDir: a state directory that is a link, or that group or
// others may change, is refused before anything is read or written.
func TestUntrustedDir(t *testing.T) {
	base := t.TempDir()
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	link := filepath.Join(base, "link")
	mine := filepath.Join(base, "mine")
	os.Mkdir(mine, 0o700)
	os.Symlink(mine, link)
	for _, dir := range []string{open, link} {
		if _, err := Open(dir); !errors.Is(err, ErrUntrustedDir) {
			t.Errorf("Open(%s): %v, want ErrUntrustedDir", dir, err)
		}
	}
	s, err := Open(mine)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(mine, 0o757)
	if err := s.Update(t.Context(), func(*State) error { return nil }); !errors.Is(err, ErrUntrustedDir) {
		t.Errorf("an update in a directory others may change: %v", err)
	}
	if os.Geteuid() == 0 {
		theirs := filepath.Join(base, "theirs")
		os.Mkdir(theirs, 0o700)
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(theirs); !errors.Is(err, ErrUntrustedDir) {
			t.Errorf("another user's directory: %v", err)
		}
	}
	if _, err := Open(filepath.Join(base, "new", "state")); err != nil {
		t.Errorf("a missing directory: %v", err)
	}
}

// TestNoLinksNoFIFOs: a link put in place of the journal or a task's
// events file is not followed, and a FIFO there does not hang a write.
func TestNoLinksNoFIFOs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	id := "t_abcdefgh"
	if err := s.PrepareTaskFiles(id); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "bashrc")
	os.WriteFile(victim, []byte("mine\n"), 0o600)
	events := s.TaskFile(FileEvents, id)
	os.Remove(events)
	os.Symlink(victim, events)
	if err := AppendTaskEventIn(dir, id, TaskEvent{Event: "Stop"}); err == nil {
		t.Error("an event was appended through a link")
	}
	if b, _ := os.ReadFile(victim); string(b) != "mine\n" {
		t.Errorf("the link's target changed: %q", b)
	}
	os.Remove(events)
	if err := syscall.Mkfifo(events, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- AppendTaskEventIn(dir, id, TaskEvent{Event: "Stop"}) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("an event was written into a FIFO")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a FIFO in the events file's place hung the write")
	}
	go func() { _, err := s.ReadTaskEvents(id); done <- err }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a FIFO in the events file's place hung the read")
	}
}
