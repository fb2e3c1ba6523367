// Package record is the task record's writes, below every operation: the
// durable updates (retried while the state lock is busy or the disk full,
// never dropped silently), a task's status changes and its end (its queue
// dropped with it), and the journal's entries. A Book is a value made from
// what it uses — a store, a clock, where to warn, and how to tell which
// processes live — so that it can be built anywhere and tested alone.
package record

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/state"
)

// The bounds of UpdateDurably: the first wait after a failed write, the
// longest, and how long a write that records an outcome keeps being tried
// before it is given up.
const (
	FirstWait = 50 * time.Millisecond
	MaxWait   = 5 * time.Second
	GiveUp    = 10 * time.Minute
)

// Book writes the records of the tasks in Store.
type Book struct {
	Store *state.Store
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Warn says what went wrong (a retried or a lost write); nil says
	// nothing.
	Warn func(format string, args ...any)
	// Procs tells which processes live (a message claimed by a dead
	// supervisor fails when its task ends).
	Procs messaging.Procs
}

func (b Book) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return clock.Now()
}

func (b Book) warn(format string, args ...any) {
	if b.Warn != nil {
		b.Warn(format, args...)
	}
}

// Task reads one task by id or unique prefix.
func (b Book) Task(ctx context.Context, ref string) (*state.Task, error) {
	if state.ValidTaskID(ref) {
		// A whole id: its entry and record only (Store.ReadTask).
		return b.Store.ReadTask(ctx, ref)
	}
	st, err := b.Store.Read(ctx)
	if err != nil {
		return nil, err
	}
	return st.FindTask(ref)
}

// UpdateDurably applies fn in a state update that must not be lost to
// contention: the record of a dispatched task, its status changes, the
// end of a turn, a supervisor taking or letting go of its task. A write
// that fails for a reason that passes (the lock held past its timeout, a
// full disk, an I/O error) is tried again, with backoff, for up to GiveUp
// or until ctx ends (callers that record an outcome pass a context
// without cancel). One that cannot be written (a corrupt or newer state
// file, no permission, or still failing then) is said through Warn with
// what was lost: the task then stays as it was, and reconciliation finds
// its process gone. fn may run several times; each run starts from the
// state on disk.
func (b Book) UpdateDurably(ctx context.Context, what string, fn func(*state.State) error) error {
	return b.durably(ctx, what, func() error { return b.Store.Update(ctx, fn) })
}

// UpdateIndexDurably is UpdateDurably through Store.UpdateIndex: fn reads
// the index's tasks by their hot fields, and whole only those it asks for
// with State.Task (a dispatch's record of its new task).
func (b Book) UpdateIndexDurably(ctx context.Context, what string, fn func(*state.State) error) error {
	return b.durably(ctx, what, func() error { return b.Store.UpdateIndex(ctx, fn) })
}

// CreateTaskDurably is UpdateIndexDurably for the record of new task t
// (Store.CreateTask): direct is the caller's own admission, which records
// it; when another process holds the lock, t and a are handed to it, so
// that a burst's new tasks share its write.
func (b Book) CreateTaskDurably(ctx context.Context, what string, t *state.Task, a state.Admission, direct func(*state.State) error) error {
	return b.durably(ctx, what, func() error { return b.Store.CreateTask(ctx, t, a, direct) })
}

// UpdateTaskDurably is UpdateDurably for a change of one task that depends
// on that task alone: it goes through Store.UpdateTask, so when another
// process holds the lock the change is handed to it and shares its write.
// fn may run several times, on a copy of the task.
func (b Book) UpdateTaskDurably(ctx context.Context, what, id string, fn func(*state.Task) error) error {
	return b.durably(ctx, what, func() error { return b.Store.UpdateTask(ctx, id, fn) })
}

// Update applies fn to one task, durably (UpdateTaskDurably): fn must
// depend on that task alone, and may run more than once.
func (b Book) Update(ctx context.Context, id string, fn func(*state.Task)) error {
	return b.UpdateTaskDurably(ctx, "task "+id, id, func(t *state.Task) error {
		fn(t)
		return nil
	})
}

// durably calls write until it succeeds, fails for good or runs out of
// time (see UpdateDurably).
func (b Book) durably(ctx context.Context, what string, write func() error) error {
	wait, deadline := FirstWait, clock.Now().Add(GiveUp)
	for try := 1; ; try++ {
		err := write()
		if err == nil || !Transient(err) || clock.Now().Add(wait).After(deadline) {
			// A refusal (bad input, a bound) is the caller's to say: the
			// record was never meant to be written.
			if err != nil && !errors.Is(err, fault.ErrUsage) {
				b.warn("%s: not recorded after %d tries: %v (the task is left as it was; 'runner ps' shows it orphaned once this process is gone, and 'runner resume' takes it up)", what, try, err)
			}
			return err
		}
		if try == 1 || try%10 == 0 {
			b.warn("%s: the state write failed (%v); trying again", what, err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, MaxWait)
	}
}

// Transient reports whether a failed state write may succeed when tried
// again.
func Transient(err error) bool {
	switch {
	case errors.Is(err, state.ErrBusy),
		errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT),
		errors.Is(err, syscall.EIO), errors.Is(err, syscall.EAGAIN),
		errors.Is(err, syscall.EINTR), errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return true
	}
	return false
}

// SetStatus records a status change unless the task already ended (a
// cancel from another process wins over a late supervisor). A task that
// ends otherwise than done loses its queue, which can never be delivered
// now: the messages dropped are journaled. fn must depend on the task
// alone, and may run more than once.
func (b Book) SetStatus(ctx context.Context, id string, s state.Status, reason string, fn func(*state.Task)) error {
	what := "task " + id + ": " + string(s) + ": " + reason
	// change reports whether it changed t (not when t had ended).
	change := func(t *state.Task) bool {
		if t.Status.IsTerminal() {
			return false
		}
		if fn != nil {
			fn(t)
		}
		if t.Status != s || s == state.StatusRunning {
			_ = t.SetStatus(s, b.now(), reason)
		}
		return true
	}
	// A status change is never dropped for a busy lock or a full disk.
	if !s.IsTerminal() || s == state.StatusDone {
		// One task's change: handed to the lock's holder if there is one.
		return b.UpdateTaskDurably(ctx, what, id, func(t *state.Task) error {
			change(t)
			return nil
		})
	}
	var dropped []*state.Message
	err := b.UpdateDurably(ctx, what, func(st *state.State) error {
		dropped = nil
		t := st.Task(id)
		if t == nil {
			return fmt.Errorf("task %s: %w", id, state.ErrTaskNotFound)
		}
		if change(t) {
			dropped = messaging.DropQueue(st, id, b.now(), fmt.Sprintf("task %s ended %s before taking it", id, s), b.Procs)
		}
		return nil
	})
	b.JournalDropped(ctx, dropped)
	return err
}

// Finish is SetStatus with the change journaled.
func (b Book) Finish(ctx context.Context, id string, s state.Status, reason string, fn func(*state.Task)) error {
	err := b.SetStatus(ctx, id, s, reason, fn)
	if t, _ := b.Task(ctx, id); t != nil {
		b.Journal(ctx, t, "status", string(s)+": "+reason)
	}
	return err
}

// Journal appends an event of kind about t to the journal.
func (b Book) Journal(ctx context.Context, t *state.Task, kind, msg string) {
	_ = b.Store.Journal(ctx, state.Event{Time: b.now(), Kind: kind, PID: os.Getpid(), Project: t.Project, Task: t.ID, Status: t.Status, Message: msg})
}

// JournalMessage appends the journal line of one step of message m: kind
// "queued", "delivered", "refused"… ("msg-"+kind), and the line "ID from
// FROM to TO (TYPE, hop N)[: reason]" ("-" for a message refused before it
// had an id).
func (b Book) JournalMessage(ctx context.Context, at time.Time, kind string, m *state.Message, reason string) {
	id := m.ID
	if id == "" {
		id = "-"
	}
	text := fmt.Sprintf("%s from %s to %s (%s, hop %d)", id, m.From, m.To, m.Type, m.Hops)
	if reason != "" {
		text += ": " + reason
	}
	_ = b.Store.Journal(ctx, state.Event{Time: at, Kind: "msg-" + kind, Task: m.To, Message: text})
}

// JournalDropped journals each of msgs under its status.
func (b Book) JournalDropped(ctx context.Context, msgs []*state.Message) {
	for _, m := range msgs {
		b.JournalMessage(ctx, b.now(), string(m.Status), m, m.Reason)
	}
}
