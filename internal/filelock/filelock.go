// Package filelock takes flocks (through gofrs/flock) with a timeout and a
// context, waking as soon as the lock is free rather than polling (Lock,
// TryLock), the same on a file the caller keeps open to hand to a child
// (LockFile, Unlock: the project lock), and one of n slots shared by
// every process of the machine (Slot: the bounds on tmux clients and on
// agents starting at once).
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
	release, err := Try(path)
	return release, err == nil
}

// Try is TryLock that tells a lock held (an error wrapping ErrHeld) from
// a file that cannot be opened or locked (any other error).
func Try(path string) (release func(), err error) {
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW), flock.SetPermissions(0o600))
	got, err := fl.TryLock()
	if err != nil || !got {
		_ = fl.Close()
		if err == nil {
			err = ErrHeld
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { _ = fl.Unlock() }, nil
}

// ErrHeld is LockFile's error, without wait, for a lock another open
// file holds.
var ErrHeld = errors.New("lock held by another")

// LockFile takes the exclusive flock on f, an open file the caller keeps
// (gofrs/flock does not give its file out): one to hand to a child
// process, which then holds the lock too (flock locks belong to the open
// file), such as the project lock of dispatch --exclusive. Without wait,
// a lock held elsewhere is an error wrapping ErrHeld at once; with wait,
// it blocks in a goroutine, so the kernel wakes it as soon as the lock is
// free (no polling), until ctx ends. On an error f is closed: at once,
// or, for an abandoned wait, when that wait ends (the lock it then got
// released).
func LockFile(ctx context.Context, f *os.File, wait bool) error {
	fd := int(f.Fd())
	err := flockFD(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	case !wait:
		f.Close()
		return fmt.Errorf("lock %s: %w", f.Name(), ErrHeld)
	}
	done := make(chan error) // unbuffered: a send succeeds only if someone still waits
	abandon := make(chan struct{})
	go func() {
		err := flockFD(fd, syscall.LOCK_EX)
		select {
		case done <- err:
		case <-abandon:
			if err == nil {
				Unlock(f)
			} else {
				f.Close()
			}
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		return nil
	case <-ctx.Done():
		close(abandon)
		return fmt.Errorf("wait for lock %s: %w", f.Name(), ctx.Err())
	}
}

// Unlock releases the flock on f, a file LockFile locked (by hand, like
// flockFD, for the same reason): for every
// process that shares its open file too (one that inherited it, by
// mistake or not, holds it no longer), and closes f.
func Unlock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// flockFD is flock(2) on fd, again when a signal interrupts it. Written by
// hand, the one place outside gofrs/flock (TestOneFlock): gofrs/flock locks
// only a file it opened itself and never gives it out, and LockFile's file
// must be handed to a child process that keeps holding the lock.
func flockFD(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
