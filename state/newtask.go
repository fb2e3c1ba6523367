// Group commit of new tasks across processes: a new task handed to the
// lock's holder as data, with what admits it (Admission) as data too.

package state

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/filelock"
)

// Admission is what a new task must pass in the state it joins, as data,
// so that whichever process holds the lock can check it (CreateTask). Its
// checks are those of the caller's own: a task it refuses is recorded (or
// refused) by the caller's, which say why.
type Admission struct {
	// Parent's tree (Root) may have at most MaxTree tasks not ended
	// (0: any number) and may have dispatched at most PerMinute children
	// in the minute before Now (0: any number); no Parent: no bound.
	Parent    string    `json:"parent,omitempty"`
	MaxTree   int       `json:"max_tree,omitempty"`
	PerMinute int       `json:"per_minute,omitempty"`
	Now       time.Time `json:"now"`
	// PortBase and PortCount: the task gets a range of PortCount ports
	// from PortBase (AllocatePorts; PortCount 0: none); with Probe, none
	// of them in use on this machine (Store.PortBusy).
	PortBase  int  `json:"port_base,omitempty"`
	PortCount int  `json:"port_count,omitempty"`
	Probe     bool `json:"probe,omitempty"`
}

// TreeBreadth is the breadth of the tree task parent belongs to, as of
// now: its root, how many of its tasks have not ended (live), and how
// many of its children were created in the minute before now (recent).
func (s *State) TreeBreadth(parent string, now time.Time) (root string, live, recent int) {
	root = s.Root(parent)
	for _, t := range s.Tasks {
		if s.Root(t.ID) != root {
			continue
		}
		if t.Status.IsActive() {
			live++
		}
		if t.Parent != "" && now.Sub(t.Created) < time.Minute {
			recent++
		}
	}
	return root, live, recent
}

// admit adds new task t to s if a admits it: its id free, its tree's
// breadth within a's bounds, a range of ports free for it (busy: the
// probe of ports in use; nil: a range that must be probed is not given).
// It reports whether it did; s is left as it was when it did not.
func (s *State) admit(t *Task, a Admission, busy func(int) bool) bool {
	if t.ID == "" || s.Tasks[t.ID] != nil || !safeName(t.ID) || (t.Status != StatusQueued) {
		return false
	}
	if a.Parent != "" && (a.MaxTree > 0 || a.PerMinute > 0) {
		_, live, recent := s.TreeBreadth(a.Parent, a.Now)
		if (a.MaxTree > 0 && live >= a.MaxTree) || (a.PerMinute > 0 && recent >= a.PerMinute) {
			return false
		}
	}
	if a.PortCount > 0 {
		if a.Probe && busy == nil {
			return false
		}
		if !a.Probe {
			busy = nil
		}
		if s.AllocatePorts(t, a.PortBase, a.PortCount, busy) != nil {
			return false
		}
	}
	s.Tasks[t.ID] = t
	return true
}

// CreateTask records new task t, queued, the way UpdateIndex(ctx, direct)
// does: direct is the caller's own admission of the task (its errors say
// why one is refused), which records it. When another process holds the
// lock, t and a go to it as data instead (the queue of UpdateTask), so
// that the new tasks of a burst share its durable write (group commit);
// t then gets what the holder gave it (its ports). A task the holder does
// not admit (an older runner, a bound reached, no probe of ports), or
// could not, is recorded through UpdateIndex(ctx, direct), which says
// why. t is the task direct records, unless direct makes another (an id
// that was taken): the caller takes the task direct made, if it made one.
// Errors are UpdateIndex's.
func (s *Store) CreateTask(ctx context.Context, t *Task, a Admission, direct func(*State) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	update := func() error { return s.UpdateIndex(ctx, direct) }
	// The lock free: no one to hand the task to.
	if unlock, ok := filelock.TryLock(s.path(LockFile)); ok {
		req := &updateReq{ctx: ctx, fn: direct, done: make(chan updateResult, 1), indexOnly: true}
		s.applyBatch([]*updateReq{req}, func() { unlock(); s.passLead() }, nil)
		return (<-req.done).unwrap()
	}
	next, err := json.Marshal(t)
	if err != nil {
		return update()
	}
	res, err := s.handOver(ctx, taskOp{Task: t.ID, New: next, Admit: &a})
	switch {
	case err != nil:
		return err
	case res == answerApplied:
		rec := s.readIndexedTask(t.ID)
		if rec == nil {
			return fmt.Errorf("record task %s: the holder of the lock recorded it, but it cannot be read back: %w", t.ID, ErrCorrupt)
		}
		t.Ports = rec.Ports
		return nil
	case res == answerFailed:
		return fmt.Errorf("record task %s: the holder of the lock wrote it, but making the state directory durable failed (see its log): %w", t.ID, syscall.EIO)
	default: // not admitted there, or the holder could not apply it
		return update()
	}
}

// applyCreate applies op, a new task handed over (CreateTask), to st if
// its Admission admits it (busy: the holder's probe of ports).
func applyCreate(st *State, op taskOp, busy func(int) bool) bool {
	t := new(Task)
	if json.Unmarshal(op.New, t) != nil || t.ID != op.Task {
		return false
	}
	return st.admit(t, *op.Admit, busy)
}
