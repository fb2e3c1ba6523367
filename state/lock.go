// The state lock: an flock (gofrs/flock) with a timeout and a context.

package state

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// lock takes the exclusive flock on state.lock, waiting at most LockTimeout
// (or until ctx ends). The returned function releases it. In one process
// only the leader of a batch of updates takes it (see updateQueues), so at
// most one thread per process waits in flock(2). Letting it go passes the
// lead to a process whose change waits in the queue (see passLead).
func (s *Store) lock(ctx context.Context) (func(), error) {
	if err := s.ensureDir(); err != nil {
		return nil, err
	}
	timeout := s.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	unlock, err := flockFile(ctx, s.path(LockFile), false, timeout)
	if err != nil {
		return nil, err
	}
	return func() { unlock(); s.passLead() }, nil
}

// flockFile opens path (creating it 0600) and takes an flock on it
// (gofrs/flock), exclusive or shared. It first tries without blocking; if the lock is held it blocks
// in a goroutine, so waiters are woken by the kernel as soon as the lock is
// free instead of polling. If the wait is abandoned (timeout or ctx), the
// goroutine releases the lock as soon as it gets it.
func flockFile(ctx context.Context, path string, shared bool, timeout time.Duration) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("wait for lock %s: %w", path, err)
	}
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
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
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			_ = fl.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return release, nil
	case <-timer.C:
		close(abandon)
		return nil, &BusyError{Lock: path, Timeout: timeout}
	case <-ctx.Done():
		close(abandon)
		return nil, fmt.Errorf("wait for lock %s: %w", path, ctx.Err())
	}
}
