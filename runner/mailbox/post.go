package mailbox

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/reconcile"

	"github.com/runner-cli/runner/state"
)

// Limits on messages between tasks (messaging's).
const (
	// MaxMessageBytes bounds one message's text, merged repeats included.
	MaxMessageBytes = messaging.MaxMessageBytes
	// MaxPendingPerTask bounds a task's queue of pending messages.
	MaxPendingPerTask = messaging.MaxPendingPerTask
)

// Request is one `runner msg`.
type Request = messaging.Request

// Outcome is what happened to a message for one recipient.
type Outcome = messaging.Outcome

// The Outcome results.
const (
	MsgQueued     = messaging.Queued     // waits until the recipient's turn ends
	MsgDelivering = messaging.Delivering // the recipient was idle: a supervisor is typing it in now
	MsgMerged     = messaging.Merged     // merged into a pending message from the same sender and of the same type
	MsgRefused    = messaging.Refused    // not accepted (see Reason)
)

// RefusedError is returned when a message was refused for at least
// one recipient. It wraps ErrUsage (exit 2).
type RefusedError struct{ Refused []Outcome }

func (e *RefusedError) Error() string {
	var b strings.Builder
	for i, o := range e.Refused {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "message to %s refused: %s", o.To, o.Reason)
	}
	return b.String()
}

// Is makes the error match ErrUsage.
func (e *RefusedError) Is(target error) bool { return target == fault.ErrUsage }

// Post puts a message in the queue of each recipient. A recipient
// whose agent is idle (its task is done and nobody supervises it) gets a
// supervisor that delivers the queue at once; a busy one gets it when its
// turn ends. Loop protection refuses a message past MaxHops, past
// MaxPerRoot messages in the sender's tree, or past a full queue, and a
// repeat (same sender, recipient and type) is merged into the pending one.
// Every acceptance and refusal goes to the journal. If any recipient
// refused, the error is a *RefusedError (the outcomes still list
// every recipient).
func Post(ctx context.Context, d Deps, req Request) ([]Outcome, error) {
	typ, err := messaging.Check(req)
	if err != nil {
		return nil, err
	}
	// Which recipients are idle is known only under the lock; whether
	// their panes live needs tmux, which must not run under it: look
	// first, then decide under the lock.
	pre, panes, err := d.ReconcilePanes(ctx)
	if err != nil {
		return nil, err
	}
	from := req.From
	if from == "" {
		from = d.CallerTask(ctx, pre, panes)
	}
	sender, err := messaging.Sender(pre, from)
	if err != nil {
		return nil, err
	}
	targets, err := recipients(pre, sender, req.To)
	if err != nil {
		return nil, err
	}
	var outside []string
	if d.TreeOnly {
		targets, outside = messaging.SplitTree(pre, sender, targets)
	}
	// Any target may be done by the time the lock is taken: know all
	// their panes.
	p := &messaging.Posting{Req: req, Type: typ, Sender: sender, Alive: map[string]bool{}, Now: d.Now(), Procs: reconcile.LiveProcs{}}
	live := map[string]bool{}
	for _, pn := range panes {
		live[pn.ID] = !pn.Dead
	}
	for _, id := range targets {
		t := pre.Task(id)
		switch {
		case t == nil:
		case t.Tmux.Host != "":
			// Its pane is on a host: ask there (for a done task only, the
			// one case the answer decides).
			if t.Status == state.StatusDone {
				p.Alive[id] = d.RemotePaneAlive(ctx, t)
			}
		default:
			p.Alive[id] = live[t.Tmux.Pane]
		}
	}
	if len(targets) > 0 {
		if err := d.Store.Update(ctx, func(st *state.State) error { return p.Post(st, targets) }); err != nil {
			return nil, err
		}
	}
	for _, id := range outside {
		p.Outs = append(p.Outs, Outcome{To: id, Result: MsgRefused, Reason: messaging.OutsideTree(sender, id)})
	}
	var refused []Outcome
	for _, o := range p.Outs {
		if o.Result == MsgRefused {
			refused = append(refused, o)
		}
		m := &state.Message{ID: o.ID, From: messaging.SenderName(sender), To: o.To, Type: typ, Hops: o.Hops}
		d.Record.JournalMessage(ctx, p.Now, o.Result, m, o.Reason)
	}
	errs := d.StartDeliveries(ctx, p.Start)
	if len(refused) > 0 {
		errs = append(errs, &RefusedError{Refused: refused})
	}
	return p.Outs, errors.Join(errs...)
}
