package open

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/state"
)

// TestWaitBusy: the store waits the timeout given (the default task
// timeout for 0) and says once why, naming the lock and the command;
// an error that is no busy lock says nothing.
func TestWaitBusy(t *testing.T) {
	s, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	WaitBusy(s, 0, "dispatch", &b)
	if s.BusyWait != config.DefaultTaskTimeout {
		t.Errorf("BusyWait %v, want %v", s.BusyWait, config.DefaultTaskTimeout)
	}
	WaitBusy(s, 3*time.Minute, "dispatch", &b)
	s.OnBusy(errors.New("not busy"))
	if b.Len() != 0 {
		t.Errorf("said %q for an error that is no busy lock", b.String())
	}
	s.OnBusy(&state.BusyError{Lock: "state.lock", Timeout: 10 * time.Second})
	if want := "runner: the state is busy (state.lock held by other runners for more than 10s): dispatch waits its turn, at most 3m0s more\n"; b.String() != want {
		t.Errorf("said %q, want %q", b.String(), want)
	}
}
