package notify

import (
	"testing"

	"github.com/runner-cli/runner/state"
)

// TestStatusLine: what needs the user first, finished tasks never, idle
// when nothing is active.
func TestStatusLine(t *testing.T) {
	for _, c := range []struct {
		counts map[state.Status]int
		want   string
	}{
		{nil, "runner idle"},
		{map[state.Status]int{state.StatusDone: 4}, "runner idle"},
		{map[state.Status]int{state.StatusRunning: 2, state.StatusNeedsInput: 1, state.StatusQueued: 3, state.StatusDone: 9},
			"runner 1 needs input · 2 running · 3 queued"},
		{map[state.Status]int{state.StatusStarting: 1, state.StatusReady: 1, state.StatusOrphaned: 1},
			"runner 1 orphaned · 1 ready · 1 starting"},
	} {
		if got := StatusLine(c.counts); got != c.want {
			t.Errorf("%v: %q, want %q", c.counts, got, c.want)
		}
	}
}
