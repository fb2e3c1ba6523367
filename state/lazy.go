// Index-only updates: the records of the index's tasks are read only when
// the update asks for a task (State.Task), so a write's cost does not
// grow with the tasks the index carries.

package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// UpdateIndex is Update for a function that needs the index and not the
// records of its tasks: fn sees every task of the index with its hot fields
// only (those of the index entry: status, project, agent, parent, level,
// ports, tmux target, times, …; its Text is the entry's title) except the
// tasks it asks for with State.Task or FindTask, which come whole. It may
// add tasks, change the hot fields of any task, and change anything of a
// task it asked for; a change to another field of a task it did not ask
// for fails the write (nothing is written). A new task's record is written
// as Update writes it: durable before the index names it. A burst of
// dispatches, each a new process that records one task, then costs a
// write that does not depend on how many tasks are active.
func (s *Store) UpdateIndex(ctx context.Context, fn func(*State) error) error {
	return s.combinedUpdateAs(ctx, fn, true)
}

// fillTask reads the record of task id if the index-only load left it
// unread, and makes the task whole in place (its hot fields as they are
// now: fn may have changed them). A record that cannot be read is kept in
// lazyErr for the write to fail with.
func (st *State) fillTask(id string) {
	if _, ok := st.lazy[id]; !ok {
		return
	}
	cur, b := st.Tasks[id], st.base[id]
	if cur == nil {
		delete(st.lazy, id)
		return
	}
	if !sameBulk(b.rec, cur) {
		st.failLazy(fmt.Errorf("update task %s: its record's fields were changed before it was read (use State.Task): %w", id, errLazyBulk))
		return
	}
	rec, err := readRecord(st.dir, id, b.gen)
	if errors.Is(err, fs.ErrNotExist) {
		err = &recordGoneError{path: recordPath(st.dir, id, b.gen), err: err}
	}
	if err != nil {
		st.failLazy(err)
		return
	}
	whole := rec.clone()
	toEntry(cur, b.gen).applyHot(whole)
	*cur = *whole
	st.base[id] = baseOf{rec: rec, gen: b.gen}
	delete(st.lazy, id)
}

// fillAll reads every record the index-only load left unread.
func (st *State) fillAll() {
	for id := range st.lazy {
		st.fillTask(id)
	}
}

// errLazyBulk is wrapped when an index-only update changed a field of a
// task it did not read whole.
var errLazyBulk = errors.New("a task's record was not read")

func (st *State) failLazy(err error) {
	if st.lazyErr == nil {
		st.lazyErr = err
	}
}

// entryOf is the index entry of t, whose record is of generation gen: a
// task whose record was not read keeps its entry's title.
func (st *State) entryOf(t *Task, gen uint64) *entry {
	e := toEntry(t, gen)
	if title, ok := st.lazy[t.ID]; ok {
		e.Title = title
	}
	return e
}

// checkLazy fails a write that would lose what the index-only load did
// not read: a record that could not be read, or a task whose record's
// fields changed without it being read.
func (st *State) checkLazy() error {
	if st.lazyErr != nil {
		return st.lazyErr
	}
	for id := range st.lazy {
		if t, b := st.Tasks[id], st.base[id]; t != nil && !sameBulk(b.rec, t) {
			return fmt.Errorf("update task %s: its record's fields were changed but it was not read (use State.Task): %w", id, errLazyBulk)
		}
	}
	return nil
}
