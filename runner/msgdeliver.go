// Delivering the queue: a supervisor claims a task's pending messages,
// types them in as one prompt, and settles how it went.

package runner

import (
	"context"
	"time"

	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/supervisor"
	"github.com/runner-cli/runner/runner/taskbook"
	"github.com/runner-cli/runner/state"
)

// claimMessages takes the oldest pending messages of the task for one
// delivery (bounded in count and size), marks them delivering, and makes
// them what the agent is handling. Messages left delivering by a
// supervisor that died are marked failed: they may or may not have been
// typed in, and are never typed twice.
func (s *supervision) claimMessages(ctx context.Context) ([]*state.Message, error) {
	taskbook.SettleNotices(ctx, s.env.Record(), s.ID)
	var batch, stale []*state.Message
	err := s.env.Store.Update(ctx, func(st *state.State) (err error) {
		batch, stale, err = messaging.Claim(st, s.ID, s.env.Time(), reconcile.LiveProcs{})
		return err
	})
	s.env.Record().JournalDropped(ctx, stale)
	return batch, err
}

// settleMessages records how the delivery of a batch went. It is recorded
// even when the supervision is being cancelled, retried if the lock is
// busy, and journaled once recorded.
func (s *supervision) settleMessages(ctx context.Context, batch []*state.Message, st state.MessageStatus, reason string) {
	env := s.env
	ctx = context.WithoutCancel(ctx)
	now := env.Time()
	var err error
	for range 3 {
		err = env.Store.Update(ctx, func(x *state.State) error {
			messaging.Settle(x, batch, st, now, reason)
			return nil
		})
		if err == nil {
			break
		}
	}
	if err != nil {
		env.Say("task %s: could not record the delivery of %d message(s): %v", s.ID, len(batch), err)
		return
	}
	for _, m := range batch {
		env.Record().JournalMessage(ctx, now, string(st), m, reason)
	}
}

// messageTurn delivers the task's pending messages as one prompt and
// supervises the turn they start. The agent must be at its prompt first (a
// user who attached may have started something by hand since the last
// turn); if it is not within the ready timeout, the messages stay queued
// and the supervision ends with the task done.
func (s *supervision) messageTurn(ctx context.Context) error {
	if err := s.WaitIdlePrompt(ctx); err != nil {
		return err
	}
	batch, err := s.claimMessages(ctx)
	if err != nil {
		return err
	}
	if len(batch) == 0 {
		return &supervisor.Ended{Outcome: supervisor.Outcome{Status: state.StatusDone, Reason: "no messages left to deliver"}}
	}
	s.env.Say("task %s: delivering %d message(s)", s.ID, len(batch))
	if err := s.Deliver(ctx, messaging.Prompt(batch), false); err != nil {
		s.settleMessages(ctx, batch, state.MessageFailed, "the prompt was not confirmed: "+err.Error())
		return err
	}
	s.settleMessages(ctx, batch, state.MessageDelivered, "")
	return s.MonitorTurn(ctx, time.Time{})
}
