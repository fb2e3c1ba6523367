package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/runner-cli/runner/state"
)

// The bounds of updateDurably: the first wait after a failed write, the
// longest, and how long a write that records an outcome keeps being
// tried before the supervisor gives up on it.
const (
	durableFirstWait = 50 * time.Millisecond
	durableMaxWait   = 5 * time.Second
	durableGiveUp    = 10 * time.Minute
)

// updateDurably applies fn in a state update that must not be lost to
// contention: the record of a dispatched task, its status changes, the
// end of a turn, a supervisor taking or letting go of its task. A write
// that fails for a reason that passes (the lock held past its timeout, a
// full disk, an I/O error) is tried again, with backoff, for up to
// durableGiveUp or until ctx ends (callers that record an outcome pass a
// context without cancel). One that cannot be written (a corrupt or newer
// state file, no permission, or still failing then) is said on stderr,
// the supervisor's log, with what was lost: the task then stays as it
// was, and reconciliation finds its process gone. fn may run several
// times; each run starts from the state on disk.
func (env *Env) updateDurably(ctx context.Context, what string, fn func(*state.State) error) error {
	return env.durably(ctx, what, func() error { return env.Store.Update(ctx, fn) })
}

// updateTaskDurably is updateDurably for a change of one task that
// depends on that task alone: it goes through Store.UpdateTask, so when
// another process holds the lock the change is handed to it and shares
// its write. fn may run several times, on a copy of the task.
func (env *Env) updateTaskDurably(ctx context.Context, what, id string, fn func(*state.Task) error) error {
	return env.durably(ctx, what, func() error { return env.Store.UpdateTask(ctx, id, fn) })
}

// durably calls write until it succeeds, fails for good or runs out of
// time (see updateDurably).
func (env *Env) durably(ctx context.Context, what string, write func() error) error {
	wait, deadline := durableFirstWait, time.Now().Add(durableGiveUp)
	for try := 1; ; try++ {
		err := write()
		if err == nil || !transientStateError(err) || time.Now().Add(wait).After(deadline) {
			if err != nil {
				env.warn("%s: not recorded after %d tries: %v (the task is left as it was; 'runner ps' shows it orphaned once this process is gone, and 'runner resume' takes it up)", what, try, err)
			}
			return err
		}
		if try == 1 || try%10 == 0 {
			env.warn("%s: the state write failed (%v); trying again", what, err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, durableMaxWait)
	}
}

// warn says what went wrong on the progress writer, or on stderr when
// there is none (a --json run): a lost write is never silent.
func (env *Env) warn(format string, args ...any) {
	if env.Log != nil {
		env.Log.Warn(fmt.Sprintf(format, args...))
		return
	}
	w := env.Progress
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, "runner: "+format+"\n", args...)
}

// transientStateError reports whether a failed state write may succeed
// when tried again.
func transientStateError(err error) bool {
	switch {
	case errors.Is(err, state.ErrBusy),
		errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT),
		errors.Is(err, syscall.EIO), errors.Is(err, syscall.EAGAIN),
		errors.Is(err, syscall.EINTR), errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return true
	}
	return false
}
