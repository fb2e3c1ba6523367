package state

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLockProject: a held project lock is ErrProjectLocked (ErrBusy)
// without wait; with wait it is taken once let go, and a wait ends with
// its context.
func TestLockProject(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	held, err := s.LockProject(t.Context(), "api", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.LockProject(t.Context(), "api", false); !errors.Is(err, ErrProjectLocked) || !errors.Is(err, ErrBusy) {
		t.Fatalf("a held lock without wait: %v, want ErrProjectLocked", err)
	}
	other, err := s.LockProject(t.Context(), "web", false)
	if err != nil {
		t.Fatalf("another project's lock: %v", err)
	}
	other.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := s.LockProject(ctx, "api", true); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := s.LockProject(t.Context(), "api", true)
		if err == nil {
			l.Unlock()
		}
		got <- err
	}()
	held.Unlock()
	held.Unlock() // a second Unlock does nothing
	if err := <-got; err != nil {
		t.Fatalf("the wait for a lock let go: %v", err)
	}
}
