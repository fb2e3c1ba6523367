package main

import (
	"time"

	"github.com/runner-cli/runner/runner/open"
	"github.com/runner-cli/runner/state"
)

// waitBusyState makes a command with a timeout of its own (a dispatch)
// wait its turn when other runners hold the state's lock past the
// lock_timeout, rather than fail with exit 5 (open.WaitBusy: at most
// timeout more, the default task_timeout, 60m, when 0; said once on
// stderr). A task that is truly busy (an exclusive project's lock) still
// exits 5. A supervisor waits the same way (timeout 0).
func (a *app) waitBusyState(store *state.Store, timeout time.Duration, what string) {
	open.WaitBusy(store, timeout, what, a.errOut)
}
