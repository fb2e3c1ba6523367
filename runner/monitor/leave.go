package monitor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/tmuxctl"
)

// pressLeave presses the keys of det, a screen showing a view that hides
// the agent's state (profile.Profile.Leave), on pane. A pane gone is
// ErrPaneGone.
func pressLeave(ctx context.Context, tc Panes, pane string, det profile.Detection) error {
	if err := tc.SendKeys(ctx, pane, det.LeaveKeys...); err != nil {
		if errors.Is(err, tmuxctl.ErrNotFound) {
			return fmt.Errorf("pane %s: %w (the window was closed or the tmux server stopped)", pane, ErrPaneGone)
		}
		return fmt.Errorf("leave the view on pane %s (%s, rule %s): %w", pane, strings.Join(det.LeaveKeys, " "), det.Rule, err)
	}
	return nil
}

// LeaveView leaves the view det shows on pane as a wait does, outside a
// wait (runner send, before it types): the keys pressed at most maxLeaves
// times, the screen looked at again until the view is gone (every 100 ms,
// up to leaveRecheck's tenfold after each press). It returns the last
// screen, the view's own when it stays (the user's to leave).
func LeaveView(ctx context.Context, tc Panes, pane string, prof *profile.Profile, det profile.Detection) (string, error) {
	screen := ""
	for range maxLeaves {
		if err := pressLeave(ctx, tc, pane, det); err != nil {
			return "", err
		}
		for end := clock.Now().Add(10 * leaveRecheck); clock.Now().Before(end); {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			_, s, err := tc.PaneScreen(ctx, pane)
			if err != nil {
				return "", err
			}
			if screen, det = s, profile.Detect(prof, s); len(det.LeaveKeys) == 0 {
				return screen, nil
			}
		}
	}
	return screen, nil
}
