// How a supervision that stopped ends: the task's own clock, and the error
// it stopped with mapped to the outcome to record (or, when interrupted,
// to the record of the interruption).

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// ErrOrphaned is wrapped (see Orphaned) by an error that leaves the task
// orphaned rather than failed: the agent may well be working still (the
// connection to its host was lost), and `runner resume` reconnects.
var ErrOrphaned = errors.New("the task is left orphaned")

type orphaned struct{ err error }

func (o orphaned) Error() string   { return o.err.Error() }
func (o orphaned) Unwrap() []error { return []error{o.err, ErrOrphaned} }

// Orphaned marks err, with its words unchanged, as one that leaves the
// task orphaned (ErrOrphaned).
func Orphaned(err error) error { return orphaned{err} }

// StartClock starts the task's time (--timeout): ctx with that deadline,
// which Ending tells from any other deadline (a tmux call's).
func (s *Supervisor) StartClock(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	s.deadline = clock.Now().Add(d)
	return context.WithDeadline(ctx, clock.Real(s.deadline))
}

// Ending maps the error a supervision stopped with to the outcome to
// record (Conclude records it). An orphaning error and an interruption
// (parent done: SIGINT, SIGTERM) are recorded here, through b, and
// return no outcome, only the error to exit with. ctx is for the
// records (not cancelled).
func (s *Supervisor) Ending(ctx, parent context.Context, b Book, err error) (*Ended, error) {
	var eo *Ended
	if !errors.As(err, &eo) {
		s.recordDelivered(ctx) // this end is not Conclude's
	}
	switch {
	case errors.As(err, &eo):
		return eo, nil
	case errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil && !s.deadline.IsZero() && !clock.Now().Before(s.deadline):
		// The task's own time, not a tmux call's that ran out (that
		// one is a failure, with its words).
		return &Ended{Outcome: Outcome{Status: state.StatusTimeout, Reason: "the task did not finish before its --timeout"}}, nil
	case errors.Is(err, monitor.ErrPaneGone):
		return &Ended{Outcome: Outcome{Status: state.StatusFailed, Reason: err.Error()}}, nil
	case errors.Is(err, tmuxctl.ErrNotFound):
		// The pane or server vanished during a delivery or a key press.
		return &Ended{Outcome: Outcome{Status: state.StatusFailed, Reason: fmt.Sprintf("pane %s: %v (the window was closed or the tmux server stopped): %v", s.PaneID, monitor.ErrPaneGone, err)}}, nil
	case errors.Is(err, ErrOrphaned):
		// Not failed: the agent may well be working on there.
		_ = b.SetStatus(ctx, state.StatusOrphaned, err.Error()+" (runner resume "+s.ID+" reconnects)", nil)
		return nil, fmt.Errorf("task %s: %w (the agent is left as it is there; 'runner resume %s' reconnects)", s.ID, err, s.ID)
	case parent.Err() == nil:
		return &Ended{Outcome: Outcome{Status: state.StatusFailed, Reason: err.Error()}}, nil
	}
	// Interrupted: the pane is left as it is.
	t, _ := b.Task(ctx)
	if t != nil && t.Status.IsTerminal() {
		// Ended by another process (runner cancel), which stopped us.
		return nil, fmt.Errorf("task %s ended while supervised: %s (%s): %w", s.ID, t.Status, t.LastReason(), parent.Err())
	}
	if t != nil {
		if s.Settings.Detached {
			// A detached supervisor that is stopped leaves the task
			// to be resumed.
			_ = b.SetStatus(ctx, state.StatusOrphaned, "supervisor stopped", nil)
		} else {
			const why = "interrupted; the agent's pane is left running"
			_ = b.SetStatus(ctx, state.StatusCancelled, why, nil)
			b.Journal(ctx, "status", string(state.StatusCancelled)+": "+why)
		}
	}
	return nil, fmt.Errorf("task %s interrupted; the agent's pane is left running (runner attach %s): %w", s.ID, s.ID, parent.Err())
}
