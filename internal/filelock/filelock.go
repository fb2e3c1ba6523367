// Package filelock takes flocks (through gofrs/flock) with a timeout and a
// context, waking as soon as the lock is free rather than polling (Lock,
// TryLock), and one of n slots shared by every process of the machine
// (Slot: the bounds on tmux clients and on agents starting at once).
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// ErrTimeout is returned when the lock stayed held past the timeout.
var ErrTimeout = errors.New("lock held past the timeout")

// Lock opens path (creating it 0600, never through a symbolic link: a
// symlink planted at path is an error) and takes an flock on it, exclusive or
// shared. It first tries without blocking; if the lock is held it blocks
// in a goroutine, so the kernel wakes it as soon as the lock is free. It
// gives up with an error wrapping ErrTimeout after timeout (none if 0 or
// less), or with ctx's error. An abandoned wait releases the lock as soon
// as it gets it. The returned function releases the lock.
func Lock(ctx context.Context, path string, shared bool, timeout time.Duration) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("wait for lock %s: %w", path, err)
	}
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW), flock.SetPermissions(0o600))
	try, lock := fl.TryLock, fl.Lock
	if shared {
		try, lock = fl.TryRLock, fl.RLock
	}
	release := func() { _ = fl.Unlock() } // Unlock also closes the file
	ok, err := try()
	if err != nil {
		_ = fl.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if ok {
		return release, nil
	}
	done := make(chan error) // unbuffered: a send succeeds only if someone still waits
	abandon := make(chan struct{})
	go func() {
		err := lock()
		select {
		case done <- err:
		case <-abandon:
			release()
		}
	}()
	var expired <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case err := <-done:
		if err != nil {
			_ = fl.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return release, nil
	case <-expired:
		close(abandon)
		return nil, fmt.Errorf("lock %s: %w (%s)", path, ErrTimeout, timeout)
	case <-ctx.Done():
		close(abandon)
		return nil, fmt.Errorf("wait for lock %s: %w", path, ctx.Err())
	}
}

// TryLock takes the exclusive flock on path if it is free now; ok is
// false if it is held (or the file cannot be opened).
func TryLock(path string) (release func(), ok bool) {
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW), flock.SetPermissions(0o600))
	if got, err := fl.TryLock(); err != nil || !got {
		_ = fl.Close()
		return nil, false
	}
	return func() { _ = fl.Unlock() }, true
}
