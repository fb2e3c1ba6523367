// The record of a delivery left to the end of its turn (FoldRunning).

package supervisor

import (
	"context"
	"time"

	"github.com/runner-cli/runner/state"
)

// delivered is the record of a delivery not yet written: the task
// running since at, why, and the delivery's own fields (change). A quick
// turn's hook can come while its delivery is confirmed: nothing but reads
// comes between the delivery and the end of such a turn, so its end's
// write records both (TurnText.Delivered), the delivery first. Any other
// write of the supervision first records it alone (recordDelivered): no
// record ever shows the turn's end, a question or an interruption without
// the delivery before it.
type delivered struct {
	at     time.Time
	reason string
	change func(*state.Task)
}

// takeDelivered is the change that records a delivery left to the end's
// write, ahead of it (nil: none left), and leaves none.
func (s *Supervisor) takeDelivered() func(*state.Task) {
	d := s.delivered
	if d == nil {
		return nil
	}
	s.delivered = nil
	return func(t *state.Task) {
		d.change(t)
		_ = t.SetStatus(state.StatusRunning, d.at, d.reason)
	}
}

// recordDelivered writes the record of a delivery left to the end's write,
// when another write comes first.
func (s *Supervisor) recordDelivered(ctx context.Context) {
	d := s.delivered
	if d == nil {
		return
	}
	s.delivered = nil
	if err := s.Book.SetStatus(ctx, state.StatusRunning, d.reason, d.change); err != nil {
		s.Book.Say("task %s: recording its delivery: %v", s.ID, err)
	}
}
