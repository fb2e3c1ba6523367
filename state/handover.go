// Group commit across processes: an update of one task handed to the lock
// holder as data.

package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/atomicfile"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/filelock"
)

// UpdateTask changes task id the way Update(ctx, func(st) { fn(st.Task(id)) })
// does, but when another process holds the lock the change is handed to
// it, so that many processes share one durable write instead of each
// waiting for the lock in turn (group commit). fn must depend on nothing
// but the task it is given (and what the caller captured): it runs first
// on a copy of the task as Read returns it, and the change it made goes to
// the queue in the state directory's ops/ folder as data, the task before
// and after. Whoever holds the lock next applies every queued change whose
// task is still as it was read, writes once, and answers each owner after
// the write is durable. A change whose task moved on meanwhile (a
// conflict), or one the holder could not apply, is made again by its
// owner through Update, so fn may run twice; a task missing from the
// index (archived, or not there) goes through Update at once. Errors are
// Update's: fn's own, ErrBusy after the LockTimeout (the change is then
// withdrawn: it was not and will not be applied), ErrCorrupt, and so on.
func (s *Store) UpdateTask(ctx context.Context, id string, fn func(*Task) error) error {
	var after json.RawMessage // the task as direct left it
	direct := func(st *State) error {
		t := st.Task(id)
		if t == nil {
			return &TaskNotFoundError{Ref: id}
		}
		if err := fn(t); err != nil {
			return err
		}
		after, _ = json.Marshal(t)
		return nil
	}
	update := func() error {
		err := s.UpdateIndex(ctx, direct)
		s.known.set(id, nil)
		if err == nil {
			s.known.set(id, after)
		}
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The lock free: no one to hand the change to.
	if unlock, ok := filelock.TryLock(s.path(LockFile)); ok {
		req := &updateReq{ctx: ctx, fn: direct, done: make(chan updateResult, 1), indexOnly: true}
		s.applyBatch([]*updateReq{req}, func() { unlock(); s.passLead() }, nil)
		err := (<-req.done).unwrap()
		s.known.set(id, nil)
		if err == nil {
			s.known.set(id, after)
		}
		return err
	}
	op, ok := s.prepareOp(id, fn)
	if !ok {
		return update()
	}
	res, err := s.handOver(ctx, op)
	s.known.set(id, nil)
	switch {
	case err != nil:
		return err
	case res == answerApplied:
		s.known.set(id, op.New)
		return nil
	case res == answerFailed:
		return fmt.Errorf("update task %s: the holder of the lock wrote it, but making the state directory durable failed (see its log): %w", id, syscall.EIO)
	default: // a conflict, or the holder could not apply it
		return update()
	}
}

// knownTasks remembers, per task, the task as this process last wrote it
// (through UpdateTask), so the next change of a task
// that only this process writes (a supervisor's own) starts from it
// without reading the index. A stale entry costs a conflict, never a
// wrong write: the holder compares it with the task on disk.
type knownTasks struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

// knownMax bounds knownTasks: past it, it starts over.
const knownMax = 256

func (k *knownTasks) get(id string) json.RawMessage {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.m[id]
}

// reset forgets every task.
func (k *knownTasks) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m = nil
}

// set remembers b for id, or forgets id when b is nil.
func (k *knownTasks) set(id string, b json.RawMessage) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if b == nil {
		delete(k.m, id)
		return
	}
	if k.m == nil || len(k.m) >= knownMax {
		k.m = map[string]json.RawMessage{}
	}
	k.m[id] = b
}

// A taskOp is one handed-over change: the task as its owner read it, and
// as fn left it (both whole, as JSON).
type taskOp struct {
	Task string          `json:"task"`
	Base json.RawMessage `json:"base"`
	New  json.RawMessage `json:"new"`
	// Admit: the task is new (Base is none), added if this admits it
	// (CreateTask). A holder that does not know it finds no such task
	// in the index, and answers a conflict: its owner records it itself.
	Admit *Admission `json:"admit,omitempty"`
}

// The answers a holder gives an op's owner, one byte on its fifo.
const (
	answerApplied  = 'o' // written and durable
	answerConflict = 'c' // the task moved on, or the holder could not load or write: do it yourself
	answerFailed   = 'e' // written, but the directory fsync failed: durability unknown
	answerLead     = 'l' // the lock was let go with ops waiting: get in line for it
)

// opsDir is the queue of handed-over changes inside the state directory:
// NAME.op (waiting), NAME.claim (taken by a holder), in/ID.fifo (where its
// owner waits for the answer), .NAME.op.*.tmp (being written).
const opsDir = "ops"

// opsGrace is how often an owner waiting for its answer makes sure its
// process stands in line for the lock: the safety net for a lead lost on
// the way. An ordinary hand-over is answered within milliseconds.
const opsGrace = time.Second

// staleOps is the age past which a half-written op (its owner died
// writing it) is removed.
const staleOps = 10 * time.Minute

var opSeq atomic.Uint64

// prepareOp runs fn on a copy of the task as the index has it now; ok is
// false when the change cannot be handed over (no such task in the index,
// a state that does not load, or fn failing on this copy: Update then
// says the authoritative thing).
func (s *Store) prepareOp(id string, fn func(*Task) error) (taskOp, bool) {
	base := s.known.get(id)
	if base == nil {
		// The task as the index has it: its entry and record only.
		cur := s.readIndexedTask(id)
		if cur == nil {
			return taskOp{}, false
		}
		var err error
		if base, err = json.Marshal(cur); err != nil {
			return taskOp{}, false
		}
	}
	t := new(Task)
	if json.Unmarshal(base, t) != nil || fn(t) != nil || t.ID != id {
		return taskOp{}, false
	}
	next, err := json.Marshal(t)
	if err != nil {
		return taskOp{}, false
	}
	return taskOp{Task: id, Base: base, New: next}, true
}

// handOver queues op and waits for its answer. Whoever holds the lock
// next applies it; to make sure someone does, this process stands in the
// kernel's queue for the lock like any writer (one waiter per process, see
// getInLine), and serves the queue when its turn comes unless a holder
// answered the op first. A holder letting go of the lock with ops still
// queued tells the oldest one's owner to get in line again. Nothing polls,
// and a writer through Update is never overtaken by a change handed over:
// both wait in the same queue. Past the LockTimeout the op is withdrawn
// (ErrBusy) unless a holder already took it, in which case its answer is
// waited for.
func (s *Store) handOver(ctx context.Context, op taskOp) (byte, error) {
	dir := s.path(opsDir)
	box, name, err := s.queueOp(op)
	if err != nil {
		// No queue here (a file system without fifos, say): the change
		// goes through Update, which takes the lock in turn.
		return answerConflict, nil
	}
	answers := box.expect(name)
	defer box.forget(name)
	if err := s.writeOp(dir, name, op); err != nil {
		return answerConflict, nil
	}
	timeout := s.lockWait()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	grace := time.NewTicker(opsGrace)
	defer grace.Stop()
	done := ctx.Done()
	for {
		box.getInLine(s)
		select {
		case a := <-answers:
			if a != answerLead {
				return a, nil
			}
			continue
		case <-grace.C:
			if box.lost(dir) && !exists(filepath.Join(dir, name+".op")) && !exists(filepath.Join(dir, name+".claim")) {
				// Its fifo removed by hand, and its answer with it.
				return 0, fmt.Errorf("update task %s: its answer was lost: %s was removed meanwhile (see 'runner status %s' for what was recorded)", op.Task, fifoPath(dir, box.id), op.Task)
			}
			continue
		case <-deadline.C:
		case <-done:
		}
		// Give up unless a holder took it already: then its answer is
		// coming, and must be waited for.
		if err := os.Remove(filepath.Join(dir, name+".op")); err == nil {
			if ctx.Err() != nil {
				return 0, fmt.Errorf("wait for lock %s: %w", s.path(LockFile), ctx.Err())
			}
			return 0, &BusyError{Lock: s.path(LockFile), Timeout: timeout}
		}
		done = nil
	}
}

// queueOp names op in this process's inbox of the queue, making both if
// need be.
func (s *Store) queueOp(op taskOp) (*inbox, string, error) {
	dir := s.path(opsDir)
	if err := s.ensureDir(); err != nil {
		return nil, "", err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, "", err
	}
	box, err := openInbox(dir)
	if err != nil {
		return nil, "", err
	}
	return box, fmt.Sprintf("%020d-%s-%d", clock.Now().UnixNano(), box.id, opSeq.Add(1)), nil
}

// writeOp puts op in the queue as NAME.op: written aside and renamed, so a
// holder never reads half of one.
func (s *Store) writeOp(dir, name string, op taskOp) error {
	data, err := json.Marshal(op)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, name+".op"), data, 0o600, false)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
