package answer

import (
	"context"

	"github.com/runner-cli/runner/state"
)

// Follower is what FollowWith asks of package runner (open.Core): a
// task's record as it is now (reconciled), and a supervisor started for
// a task nothing follows.
type Follower interface {
	GetTask(ctx context.Context, ref string) (*state.Task, error)
	Resume(ctx context.Context, ref string) error
}

// FollowWith is a Deps.Follow over f, with supervised as Deps.Supervised.
// The supervisor the task had may have seen the answer, ended the turn
// and let go of the task since the answer read it: it follows only a task
// still waiting with none, and takes an end met meanwhile (a failed
// resume whose task no longer waits) as followed.
func FollowWith(f Follower, supervised func(*state.Task) bool) func(ctx context.Context, t *state.Task) error {
	return func(ctx context.Context, t *state.Task) error {
		followed := func() bool {
			now, err := f.GetTask(ctx, t.ID)
			return err == nil && (now.Status != state.StatusNeedsInput && now.Status != state.StatusOrphaned || supervised(now))
		}
		if followed() {
			return nil
		}
		if err := f.Resume(ctx, t.ID); err != nil && !followed() {
			return err
		}
		return nil
	}
}
