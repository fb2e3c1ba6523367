package tmuxctl

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

func TestChildEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "RUNNER_TASK_ID=t_parent00", "RUNNER_LEVEL=2", "HOME=/h", "FOO=old", "RUNNER_EVENTS_FILE=/e", "NOEQUALS"}
	got := ChildEnv(environ, "FOO=new", "RUNNER_TASK_ID=t_child000")
	want := []string{"PATH=/bin", "HOME=/h", "NOEQUALS", "FOO=new", "RUNNER_TASK_ID=t_child000"}
	if !slices.Equal(got, want) {
		t.Errorf("ChildEnv = %q, want %q", got, want)
	}
	if got := ChildEnv(nil); len(got) != 0 {
		t.Errorf("ChildEnv(nil) = %q", got)
	}
}

// A wake cuts a delivery's wait between two looks short; without one the
// wait is the poll's; a done context ends it with its error.
func TestSleepOrWake(t *testing.T) {
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	start := clock.Now()
	if err := sleepOrWake(t.Context(), time.Hour, wake); err != nil || clock.Since(start) > time.Minute {
		t.Fatalf("woken: %v after %s", err, clock.Since(start))
	}
	start = clock.Now()
	if err := sleepOrWake(t.Context(), 20*time.Millisecond, nil); err != nil || clock.Since(start) < 20*time.Millisecond {
		t.Errorf("no wake: %v after %s, want the whole 20ms", err, clock.Since(start))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := sleepOrWake(ctx, time.Hour, make(chan struct{})); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
