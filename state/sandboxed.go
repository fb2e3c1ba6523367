// The index's list of sandboxed tasks: a reader that needs only them (the
// check that a tmux socket lies where no sandboxed agent writes) reads
// their records, not every record of the index.

package state

import "slices"

// sandboxedList is the index's list of its sandboxed tasks, sorted, and
// whether it can be made: a task whose record this load did not read is
// in it as the list loaded said, and without a list loaded (an older
// runner wrote the file) there is none to make until every such record
// is read.
func (st *State) sandboxedList() ([]string, bool) {
	var list []string
	for id, t := range st.Tasks {
		if _, unread := st.lazy[id]; unread {
			if st.sandboxed == nil {
				return nil, false
			}
			if st.sandboxed[id] {
				list = append(list, id)
			}
			continue
		}
		if len(t.Sandbox) > 0 {
			list = append(list, id)
		}
	}
	slices.Sort(list)
	return list, true
}

// SandboxedTasks returns the tasks of the index that run in a sandbox (a
// Sandbox in their record), whole, sorted as TaskList. On a state read
// with ReadIndex it reads the records of the tasks the index lists as
// sandboxed, or, when the file has no list it can trust (an older runner
// wrote it last), every record; a record that cannot be read is left out,
// as Read would have failed without it.
func (st *State) SandboxedTasks() []*Task {
	var out []*Task
	for _, t := range st.TaskList() {
		if _, unread := st.lazy[t.ID]; unread {
			if st.sandboxed != nil && !st.sandboxed[t.ID] {
				continue
			}
			st.fillTask(t.ID)
			if _, still := st.lazy[t.ID]; still {
				continue
			}
		}
		if len(t.Sandbox) > 0 {
			out = append(out, t)
		}
	}
	return out
}
