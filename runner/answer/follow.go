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

// Following is a Supervision over f, with supervised as its Supervised
// (reconcile.SupervisorAlive). The supervisor the task had may have seen
// the answer, ended the turn and let go of the task since the answer
// read it: Follow follows only a task still waiting with none, and takes
// an end met meanwhile (a failed resume whose task no longer waits) as
// followed.
func Following(f Follower, supervised func(*state.Task) bool) Supervision {
	return following{f, supervised}
}

// following is the Supervision Following makes.
type following struct {
	f          Follower
	supervised func(*state.Task) bool
}

// Supervised reports whether a live supervisor follows t.
func (w following) Supervised(t *state.Task) bool { return w.supervised(t) }

// Follow starts a supervisor for t unless it ended or one follows it.
func (w following) Follow(ctx context.Context, t *state.Task) error {
	followed := func() bool {
		now, err := w.f.GetTask(ctx, t.ID)
		return err == nil && (now.Status != state.StatusNeedsInput && now.Status != state.StatusOrphaned || w.supervised(now))
	}
	if followed() {
		return nil
	}
	if err := w.f.Resume(ctx, t.ID); err != nil && !followed() {
		return err
	}
	return nil
}
