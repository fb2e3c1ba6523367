package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/state"
)

// waitBusyState makes a command with a timeout of its own (a dispatch)
// wait its turn when other runners hold the state's lock past the
// lock_timeout, as a burst of dispatches from a script or cron does,
// rather than fail with exit 5: it waits at most timeout more (the
// default task_timeout, 60m, when 0), and says once, on stderr, why it
// waits.
// A task that is truly busy (an exclusive project's lock) still exits 5.
// A supervisor waits the same way (timeout 0).
func (a *app) waitBusyState(store *state.Store, timeout time.Duration, what string) {
	if timeout <= 0 {
		timeout = config.DefaultTaskTimeout
	}
	store.BusyWait = timeout
	store.OnBusy = func(err error) {
		var be *state.BusyError
		if !errors.As(err, &be) {
			return
		}
		fmt.Fprintf(a.errOut, "runner: the state is busy (%s held by other runners for more than %v): %s waits its turn, at most %v more\n",
			be.Lock, be.Timeout, what, timeout)
	}
}
