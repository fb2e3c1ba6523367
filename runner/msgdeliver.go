// Delivering the queue: a supervisor claims a task's pending messages,
// types them in as one prompt, and settles how it went.

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// errMoreMessages ends a turn whose task has messages waiting: the
// supervisor delivers them as the next turn.
var errMoreMessages = errors.New("messages are waiting")

// claimMessages takes the oldest pending messages of the task for one
// delivery (bounded in count and size), marks them delivering, and makes
// them what the agent is handling. Messages left delivering by a
// supervisor that died are marked failed: they may or may not have been
// typed in, and are never typed twice.
func (s *supervisor) claimMessages(ctx context.Context) ([]*state.Message, error) {
	env := s.env
	var batch []*state.Message
	var stale []*state.Message
	err := env.Store.Update(ctx, func(st *state.State) error {
		batch, stale = nil, nil
		t := st.Task(s.id)
		if t == nil {
			return fmt.Errorf("task %s: %w", s.id, state.ErrTaskNotFound)
		}
		if t.SupervisorPID != os.Getpid() {
			// Another supervisor took the task: it delivers.
			return fmt.Errorf("task %s is supervised by process %d now, not %d", s.id, t.SupervisorPID, os.Getpid())
		}
		if t.Status.IsTerminal() {
			return nil // cancelled meanwhile: nothing to deliver
		}
		stale = messaging.FailStaleClaims(st, s.id, env.now(), "")
		size := 0
		hops := 0
		var ids []string
		for _, m := range st.MessagesFor(s.id, state.MessagePending) {
			if len(batch) == maxBatchMessages || (len(batch) > 0 && size+len(m.Text) > maxBatchBytes) {
				break
			}
			m.Status, m.ClaimedBy = state.MessageDelivering, os.Getpid()
			size += len(m.Text)
			hops = max(hops, m.Hops)
			ids = append(ids, m.ID)
			c := *m
			batch = append(batch, &c)
		}
		if len(batch) > 0 {
			t.Handling, t.HandlingHops = ids, hops
		}
		return nil
	})
	env.journalDropped(ctx, stale)
	return batch, err
}

// settleMessages records how the delivery of a batch went. It is recorded
// even when the supervision is being cancelled, retried if the lock is
// busy, and journaled once recorded.
func (s *supervisor) settleMessages(ctx context.Context, batch []*state.Message, st state.MessageStatus, reason string) {
	env := s.env
	ctx = context.WithoutCancel(ctx)
	now := env.now()
	var err error
	for range 3 {
		err = env.Store.Update(ctx, func(x *state.State) error {
			for _, b := range batch {
				if m := x.Messages[b.ID]; m != nil && m.Status == state.MessageDelivering {
					m.SetMessageStatus(st, now, reason)
				}
			}
			return nil
		})
		if err == nil {
			break
		}
	}
	if err != nil {
		env.say("task %s: could not record the delivery of %d message(s): %v", s.id, len(batch), err)
		return
	}
	for _, m := range batch {
		env.journalMessage(ctx, now, string(st), m, reason)
	}
}

// messageTurn delivers the task's pending messages as one prompt and
// supervises the turn they start. The agent must be at its prompt first (a
// user who attached may have started something by hand since the last
// turn); if it is not within the ready timeout, the messages stay queued
// and the supervision ends with the task done.
func (s *supervisor) messageTurn(ctx context.Context) error {
	if err := s.waitIdlePrompt(ctx); err != nil {
		return err
	}
	batch, err := s.claimMessages(ctx)
	if err != nil {
		return err
	}
	if len(batch) == 0 {
		return &errOutcome{outcome{status: state.StatusDone, reason: "no messages left to deliver"}}
	}
	s.env.say("task %s: delivering %d message(s)", s.id, len(batch))
	if err := s.deliver(ctx, messaging.Prompt(batch), false); err != nil {
		s.settleMessages(ctx, batch, state.MessageFailed, "the prompt was not confirmed: "+err.Error())
		return err
	}
	s.settleMessages(ctx, batch, state.MessageDelivered, "")
	return s.monitorTurn(ctx, time.Time{})
}

// waitIdlePrompt waits until the pane shows the agent's prompt, at most the
// ready timeout. A question on the screen is handled like in a turn
// (needs_input); an error screen is waited out.
func (s *supervisor) waitIdlePrompt(ctx context.Context) error {
	readyTimeout := s.set.ReadyTimeout
	if readyTimeout <= 0 {
		readyTimeout = 60 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		screen, err := s.tc.CaptureScreen(rctx, s.pane)
		if err != nil && rctx.Err() == nil {
			return err
		}
		if err == nil && profile.Detect(s.prof, screen).State == profile.StateReady {
			return nil
		}
		var obs monitor.Observation
		if err == nil {
			obs, err = s.mon.Wait(rctx, monitor.GoalReady, time.Now())
		}
		switch {
		case err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			n := 0
			if st, rerr := s.env.Store.Read(ctx); rerr == nil {
				n = len(st.MessagesFor(s.id, state.MessagePending))
			}
			return &errOutcome{outcome{status: state.StatusDone, keepQueue: true,
				reason: fmt.Sprintf("the agent was not at its prompt within %s; %d message(s) stay queued (the next 'runner msg' or 'runner send' retries)", readyTimeout, n)}}
		case err != nil:
			return err
		case obs.Dead:
			return &errOutcome{outcome{status: state.StatusExited, reason: fmt.Sprintf("the agent exited with status %d", obs.Status), obs: obs, code: &obs.Status}}
		case obs.Detection.State == profile.StateNeedsInput:
			if err := s.needsInput(ctx, obs.Detection, obs); err != nil {
				return err
			}
		case obs.Detection.State != profile.StateReady:
			// An error screen: look again shortly rather than spin.
			select {
			case <-rctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

// journalDropped records messages dropped or failed, with their reason.
func (env *Env) journalDropped(ctx context.Context, msgs []*state.Message) {
	for _, m := range msgs {
		env.journalMessage(ctx, env.now(), string(m.Status), m, m.Reason)
	}
}
