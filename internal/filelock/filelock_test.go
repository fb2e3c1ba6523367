package filelock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l")
	release, err := Lock(t.Context(), path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := TryLock(path); ok {
		t.Fatal("TryLock took a held lock")
	}
	if _, err := Lock(t.Context(), path, true, 50*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("shared lock while held exclusive: %v, want ErrTimeout", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := Lock(ctx, path, false, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	// A waiter gets the lock as soon as it is let go.
	got := make(chan error, 1)
	go func() {
		r, err := Lock(t.Context(), path, false, 10*time.Second)
		if err == nil {
			r()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	release()
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	r, ok := TryLock(path)
	if !ok {
		t.Fatal("TryLock: the lock is free")
	}
	r()
}

// n slots: n holders at once, the next one waits until one is given back,
// and a cancelled wait ends with its context's error.
func TestSlot(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	var releases []func()
	for range 3 {
		r, err := Slot(ctx, dir, 3)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := Slot(cctx, dir, 3); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a fourth slot of three: %v, want the context's deadline", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := Slot(ctx, dir, 3)
		if err == nil {
			r()
		}
		got <- err
	}()
	for _, r := range releases {
		r()
	}
	if err := <-got; err != nil {
		t.Fatalf("a waiter after the slots were given back: %v", err)
	}
}

// TestNoFollow: a symlink planted where a lock file goes is refused, and
// nothing is created where it points.
func TestNoFollow(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	link := filepath.Join(dir, "slot.0")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if release, err := Lock(t.Context(), link, false, time.Second); err == nil {
		release()
		t.Fatal("Lock took a lock through a symlink")
	}
	if release, ok := TryLock(link); ok {
		release()
		t.Fatal("TryLock took a lock through a symlink")
	}
	if _, err := os.Lstat(target); err == nil {
		t.Fatal("a file was created where the symlink points")
	}
}
