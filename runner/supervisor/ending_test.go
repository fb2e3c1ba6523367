package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// Only the task's own time running out is a timeout: a tmux call that
// ran out of its time is a failure, in its words.
func TestEndingDeadlines(t *testing.T) {
	ctx := t.Context()
	tmuxErr := fmt.Errorf("launch failed: tmux set-hook: %w", context.DeadlineExceeded)
	for _, tc := range []struct {
		name     string
		deadline time.Time
		want     state.Status
	}{
		{"no task clock", time.Time{}, state.StatusFailed},
		{"task time left", clock.Now().Add(time.Hour), state.StatusFailed},
		{"task time out", clock.Now().Add(-time.Second), state.StatusTimeout},
	} {
		s := &Supervisor{ID: "t_x", deadline: tc.deadline}
		eo, err := s.Ending(ctx, ctx, &book{}, tmuxErr)
		if err != nil || eo == nil {
			t.Fatalf("%s: outcome %v, %v", tc.name, eo, err)
		}
		if eo.Status != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, eo.Status, eo.Reason, tc.want)
		}
		if tc.want == state.StatusFailed && !strings.Contains(eo.Reason, "tmux set-hook") {
			t.Errorf("%s: reason %q does not say what failed", tc.name, eo.Reason)
		}
	}
}

// An orphaning error and an interruption are recorded by Ending and give
// no outcome; a detached supervisor that is stopped leaves the task to be
// resumed, a foreground one cancels it.
func TestEndingRecords(t *testing.T) {
	lost := errors.New("the connection to the host was lost: ssh: exit 255")
	stopped, stop := context.WithCancel(t.Context())
	stop()
	for _, tc := range []struct {
		name     string
		detached bool
		parent   context.Context
		err      error
		want     string // the record
		wantErr  error
	}{
		{"host lost", false, t.Context(), Orphaned(lost), "orphaned: " + lost.Error() + " (runner resume t_x reconnects)", lost},
		{"detached, stopped", true, stopped, context.Canceled, "orphaned: supervisor stopped", context.Canceled},
		{"foreground, interrupted", false, stopped, context.Canceled,
			"cancelled: interrupted; the agent's pane is left running|journal status: cancelled: interrupted; the agent's pane is left running", context.Canceled},
	} {
		b := &book{task: state.Task{ID: "t_x", Status: state.StatusRunning}}
		s := &Supervisor{ID: "t_x", Settings: Settings{Detached: tc.detached}}
		eo, err := s.Ending(t.Context(), tc.parent, b, tc.err)
		if eo != nil || !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: %v, %v; want no outcome and an error wrapping %v", tc.name, eo, err, tc.wantErr)
		}
		if got := strings.Join(b.log, "|"); got != tc.want {
			t.Errorf("%s: recorded %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := Orphaned(lost).Error(); got != lost.Error() {
		t.Errorf("Orphaned changed the words: %q", got)
	}
}
