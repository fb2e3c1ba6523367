// The state lock: an flock (gofrs/flock) with a timeout and a context.

package state

import (
	"context"
	"errors"
	"time"

	"github.com/runner-cli/runner/internal/filelock"
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

// flockFile takes an flock on path (see filelock.Lock), waiting at most
// timeout (DefaultLockTimeout if 0 or less): one held past it is an error
// wrapping ErrBusy.
func flockFile(ctx context.Context, path string, shared bool, timeout time.Duration) (func(), error) {
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	unlock, err := filelock.Lock(ctx, path, shared, timeout)
	if errors.Is(err, filelock.ErrTimeout) {
		return nil, &BusyError{Lock: path, Timeout: timeout}
	}
	return unlock, err
}
