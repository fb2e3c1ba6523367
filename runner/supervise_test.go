package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/supervisor"
	"github.com/runner-cli/runner/state"
)

// Only the task's own time running out is a timeout: a tmux call that
// ran out of its time is a failure, in its words.
func TestOutcomeOfDeadlines(t *testing.T) {
	ctx := t.Context()
	tmuxErr := fmt.Errorf("launch failed: tmux set-hook: %w", context.DeadlineExceeded)
	for _, tc := range []struct {
		name     string
		deadline time.Time
		want     state.Status
	}{
		{"no task clock", time.Time{}, state.StatusFailed},
		{"task time left", time.Now().Add(time.Hour), state.StatusFailed},
		{"task time out", time.Now().Add(-time.Second), state.StatusTimeout},
	} {
		s := &supervision{Supervisor: &supervisor.Supervisor{ID: "t_x"}, deadline: tc.deadline}
		eo, err := s.outcomeOf(ctx, ctx, tmuxErr)
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
