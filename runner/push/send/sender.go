// Package send is runner's one push sender (runner push-send, in
// runner-ext): it drains the outbox package push queues, each push to each
// target that wants it, in flight at once, retried with backoff, over
// HTTP(S). Apart from push so that nothing else of runner links an HTTP
// client (issue 51).
package send

import (
	"context"
	"net/http"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/push"
	"github.com/runner-cli/runner/state"
)

// Sender delivers the queued pushes (runner push-send). Only one runs per
// state directory (state's sender lock); it ends once the outbox is empty.
type Sender struct {
	Store   *state.Store
	Targets []config.PushTarget
	// Client makes the requests (nil: one with Timeout).
	Client *http.Client
	// Backoff is the wait after a failed attempt (nil: push.Backoff);
	// Attempts bounds them (0: push.MaxAttempts).
	Backoff  func(attempt int) time.Duration
	Attempts int
	// Poll is how often the outbox is read again while pushes wait
	// (0: 100ms): a push queued meanwhile goes within it.
	Poll time.Duration
	// Log says what happened (nil: nothing).
	Log func(format string, args ...any)
}

// Timeout bounds one attempt with the default client.
const Timeout = 10 * time.Second

// Run delivers the outbox while it holds the sender lock, and ends when the
// outbox is empty (nil) or another sender holds the lock. A push queued as
// it lets go of the lock is not left behind: it looks again after letting
// go, and takes the lock back for it (the queuer, finding the lock held,
// counts on that).
func (s *Sender) Run(ctx context.Context) error {
	for {
		release, ok := s.Store.PushSender()
		if !ok {
			return nil
		}
		s.drain(ctx)
		release()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if left, _ := s.Store.PushOutbox(); len(left) == 0 {
			return nil
		}
	}
}

// attempt is one attempt's result.
type attempt struct {
	key, target string
	err         error
}

// drain sends until the outbox is empty and nothing is in flight.
func (s *Sender) drain(ctx context.Context) {
	inflight := map[string]bool{}
	results := make(chan attempt)
	poll := s.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	for {
		pushes, err := s.Store.PushOutbox()
		if err != nil {
			s.logf("push outbox: %v", err)
		}
		for _, p := range pushes {
			s.start(ctx, p, inflight, results)
		}
		if len(inflight) == 0 && len(pushes) == 0 {
			return
		}
		timer := time.NewTimer(poll)
		select {
		case r := <-results:
			delete(inflight, r.key+"\x00"+r.target)
			s.record(ctx, r)
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return
		}
		timer.Stop()
	}
}

// start starts p's attempts that are due and not in flight, and takes p
// out of the outbox once every target that wants it is done with it.
func (s *Sender) start(ctx context.Context, p *state.Push, inflight map[string]bool, results chan<- attempt) {
	now, pending := clock.Now(), false
	for _, t := range s.Targets {
		if !t.Wants(state.Status(p.Event.Status)) {
			continue
		}
		id := t.ID()
		try := p.Tries[id]
		if try != nil && (!try.Sent.IsZero() || try.GaveUp) {
			continue
		}
		pending = true
		if inflight[p.Key+"\x00"+id] || (try != nil && now.Before(try.Next)) {
			continue
		}
		inflight[p.Key+"\x00"+id] = true
		go func(t config.PushTarget, ev state.PushEvent) {
			results <- attempt{key: p.Key, target: id, err: Deliver(ctx, s.client(), t, ev)}
		}(t, p.Event)
	}
	if !pending {
		if err := s.Store.DonePush(p); err != nil {
			s.logf("push %s: %v", p.Key, err)
		}
	}
}

// record writes how an attempt went into its push, the target's status,
// the event stream and the journal.
func (s *Sender) record(ctx context.Context, r attempt) {
	pushes, _ := s.Store.PushOutbox()
	var p *state.Push
	for _, q := range pushes {
		if q.Key == r.key {
			p = q
		}
	}
	if p == nil {
		return
	}
	if p.Tries == nil {
		p.Tries = map[string]*state.PushTry{}
	}
	try := p.Tries[r.target]
	if try == nil {
		try = &state.PushTry{}
		p.Tries[r.target] = try
	}
	now := clock.Now().UTC()
	try.Attempts++
	status, _ := s.Store.PushStatus()
	ts := status[r.target]
	if ts == nil {
		ts = &state.PushTargetStatus{}
		status[r.target] = ts
	}
	ts.Task = p.Event.Task
	ev := state.StreamEvent{Task: p.Event.Task, Project: p.Event.Project, To: r.target}
	switch {
	case r.err == nil:
		try.Sent, try.Error, ts.LastSent = now, "", now
		ev.Status = "sent"
		ev.Reason = "pushed " + p.Event.Status + " after " + now.Sub(p.Event.Time).Round(time.Millisecond).String()
		s.logf("task %s: pushed %s to %s (attempt %d)", p.Event.Task, p.Event.Status, r.target, try.Attempts)
	default:
		msg := cleanError(r.err)
		try.Error, ts.LastFailure, ts.Error = msg, now, msg
		if isPermanent(r.err) || try.Attempts >= s.attempts() {
			try.GaveUp = true
			ev.Status, ev.Reason = "failed", msg
		} else {
			try.Next = now.Add(s.backoff(try.Attempts))
		}
		s.logf("task %s: push of %s to %s failed (attempt %d): %s", p.Event.Task, p.Event.Status, r.target, try.Attempts, msg)
	}
	if err := s.Store.SavePush(p); err != nil {
		s.logf("push %s: %v", p.Key, err)
	}
	_ = s.Store.SetPushStatus(status)
	if ev.Status != "" {
		s.announce(ctx, ev)
	}
}

// announce puts a push's end on the event stream and in the journal.
func (s *Sender) announce(ctx context.Context, ev state.StreamEvent) {
	if err := s.Store.StreamPush(ctx, ev); err != nil {
		s.logf("event stream: %v", err)
	}
	kind := "push"
	if ev.Status == "failed" {
		kind = "push-failed"
	}
	_ = s.Store.Journal(ctx, state.Event{Kind: kind, Project: ev.Project, Task: ev.Task, Message: ev.To + ": " + ev.Reason})
}

func (s *Sender) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	return &http.Client{Timeout: Timeout}
}

func (s *Sender) backoff(n int) time.Duration {
	if s.Backoff != nil {
		return s.Backoff(n)
	}
	return push.Backoff(n)
}

func (s *Sender) attempts() int {
	if s.Attempts > 0 {
		return s.Attempts
	}
	return push.MaxAttempts
}

func (s *Sender) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(format, args...)
	}
}
