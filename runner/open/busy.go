package open

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/state"
)

// WaitBusy makes a command with a timeout of its own (a dispatch) wait
// its turn when other runners hold store's lock past the lock_timeout,
// as a burst of dispatches from a script or cron does, rather than fail
// as busy: it waits at most timeout more (the default task_timeout when
// 0), and says once, on w, why it waits (what names the command). A
// task that is truly busy (an exclusive project's lock) is still busy.
func WaitBusy(store *state.Store, timeout time.Duration, what string, w io.Writer) {
	if timeout <= 0 {
		timeout = config.DefaultTaskTimeout
	}
	store.BusyWait = timeout
	store.OnBusy = func(err error) {
		var be *state.BusyError
		if !errors.As(err, &be) {
			return
		}
		fmt.Fprintf(w, "runner: the state is busy (%s held by other runners for more than %v): %s waits its turn, at most %v more\n",
			be.Lock, be.Timeout, what, timeout)
	}
}
