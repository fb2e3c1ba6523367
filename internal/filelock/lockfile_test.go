package filelock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestLockFile: a lock held by another open file is ErrHeld without
// wait, is waited for with wait (taken once let go), and an abandoned
// wait lets go of what it gets.
func TestLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l")
	held := open(t, path)
	if err := LockFile(t.Context(), held, false); err != nil {
		t.Fatal(err)
	}
	if err := LockFile(t.Context(), open(t, path), false); !errors.Is(err, ErrHeld) {
		t.Fatalf("a held lock without wait: %v, want ErrHeld", err)
	}
	if _, ok := TryLock(path); ok {
		t.Fatal("TryLock took a lock LockFile holds")
	}
	// An abandoned wait: it gets the lock later, and lets it go.
	ctx, cancel := context.WithCancel(t.Context())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if err := LockFile(ctx, open(t, path), true); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	// A waiter gets the lock as soon as it is let go.
	got := make(chan error, 1)
	waiter := open(t, path)
	go func() { got <- LockFile(t.Context(), waiter, true) }()
	select {
	case err := <-got:
		t.Fatalf("the wait ended while the lock was held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	Unlock(held)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	Unlock(waiter)
	// The abandoned wait got the lock in turn and let it go.
	for i := 0; ; i++ {
		if release, ok := TryLock(path); ok {
			release()
			break
		}
		if i == 200 {
			t.Fatal("the abandoned wait kept the lock")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
