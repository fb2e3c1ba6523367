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
	unlock, err := s.flockPatient(ctx, s.path(LockFile))
	if err != nil {
		return nil, err
	}
	return func() { unlock(); s.passLead() }, nil
}

// lockTimeout is the store's LockTimeout, or DefaultLockTimeout.
func (s *Store) lockTimeout() time.Duration {
	if s.LockTimeout <= 0 {
		return DefaultLockTimeout
	}
	return s.LockTimeout
}

// lockWait is how long a wait for state.lock may last in all: LockTimeout
// and BusyWait.
func (s *Store) lockWait() time.Duration {
	return s.lockTimeout() + max(s.BusyWait, 0)
}

// flockPatient takes the exclusive flock on path like flockFile with the
// LockTimeout; past it, with a BusyWait, it says so once (OnBusy) and waits
// on, at most BusyWait more. Held past both: an error wrapping ErrBusy.
func (s *Store) flockPatient(ctx context.Context, path string) (func(), error) {
	timeout := s.lockTimeout()
	unlock, err := flockFile(ctx, path, false, timeout)
	if !errors.Is(err, ErrBusy) || s.BusyWait <= 0 {
		return unlock, err
	}
	s.noteBusy(err)
	unlock, err = flockFile(ctx, path, false, s.BusyWait)
	if errors.Is(err, ErrBusy) {
		return nil, &BusyError{Lock: path, Timeout: s.lockWait()}
	}
	return unlock, err
}

// noteBusy calls OnBusy, once per store.
func (s *Store) noteBusy(err error) {
	if s.OnBusy != nil {
		s.busyOnce.Do(func() { s.OnBusy(err) })
	}
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
