package state

import (
	"slices"
	"sort"
	"strings"
)

// Task returns task id: from the index, or else from the archive with its
// whole record. Inside an Update, a task read from the archive goes back
// into the index (and out of its segment), so what the function changes
// in it is written; a state from Read is left as it is. It returns nil if
// no task has that id, or if the archive cannot be read (FindTask says
// why).
func (s *State) Task(id string) *Task {
	if t, ok := s.Tasks[id]; ok {
		s.fillTask(id)
		return t
	}
	t, _ := s.fromArchive(id)
	return t
}

// fromArchive finds id in the archive and promotes it (see promote).
func (s *State) fromArchive(id string) (*Task, error) {
	if len(s.arch.Tasks) == 0 || !ValidTaskID(id) {
		return nil, nil
	}
	e, seg, err := s.archived(id)
	if err != nil || e == nil {
		return nil, err
	}
	return s.promote(e, seg)
}

// FindTask returns the task whose id is ref or starts with ref, like git
// accepts any unique prefix of a hash, in the index or the archive (read
// whole, as Task does). The "t_" may be left out. No match is an error
// wrapping ErrTaskNotFound; more than one is an error wrapping
// ErrAmbiguousTask that lists the candidates.
func (s *State) FindTask(ref string) (*Task, error) {
	if t, ok := s.Tasks[ref]; ok {
		s.fillTask(ref)
		return t, nil
	}
	prefix := ref
	if !strings.HasPrefix(prefix, TaskIDPrefix) {
		prefix = TaskIDPrefix + prefix
	}
	if ref == "" || prefix == TaskIDPrefix {
		return nil, &TaskNotFoundError{Ref: ref}
	}
	var matches []string
	for id := range s.Tasks {
		if strings.HasPrefix(id, prefix) {
			matches = append(matches, id)
		}
	}
	if len(s.arch.Tasks) > 0 {
		es, _, err := s.archivedEntries()
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if _, in := s.Tasks[e.ID]; !in && strings.HasPrefix(e.ID, prefix) {
				matches = append(matches, e.ID)
			}
		}
	}
	switch len(matches) {
	case 0:
		return nil, &TaskNotFoundError{Ref: ref}
	case 1:
		if t := s.Tasks[matches[0]]; t != nil {
			s.fillTask(matches[0])
			return t, nil
		}
		t, err := s.fromArchive(matches[0])
		if err == nil && t == nil {
			err = &TaskNotFoundError{Ref: ref}
		}
		return t, err
	}
	sort.Strings(matches)
	return nil, &AmbiguousTaskError{Ref: ref, Matches: matches}
}

// AllTasks returns every retained task, oldest first: those of the index
// whole, and the archived ones as their index entries show them (Archived
// set, the first line of the text as Text; Task reads one whole).
func (s *State) AllTasks() ([]*Task, error) {
	out := s.TaskList()
	if len(s.arch.Tasks) == 0 {
		return out, nil
	}
	es, _, err := s.archivedEntries()
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		if _, in := s.Tasks[e.ID]; !in {
			out = append(out, e.task())
		}
	}
	sortTasks(out)
	return out, nil
}

// ArchivedCount returns how many tasks the archive holds.
func (s *State) ArchivedCount() int {
	n := 0
	for _, ref := range s.arch.Tasks {
		n += ref.N
	}
	return n
}

// sortTasks sorts by creation time, oldest first, ties by id.
func sortTasks(ts []*Task) {
	slices.SortFunc(ts, func(a, b *Task) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// AllMessages returns every retained message, the archived ones too,
// oldest first.
func (s *State) AllMessages() ([]*Message, error) {
	old, err := s.archivedMessages()
	if err != nil {
		return nil, err
	}
	out := s.MessageList()
	for _, m := range old {
		if _, in := s.Messages[m.ID]; !in {
			out = append(out, m)
		}
	}
	sortMessages(out)
	return out, nil
}

// MessageHistory returns the messages to or from task id, the archived
// ones too, oldest first.
func (s *State) MessageHistory(id string) ([]*Message, error) {
	all, err := s.AllMessages()
	if err != nil {
		return nil, err
	}
	var out []*Message
	for _, m := range all {
		if m.To == id || m.From == id {
			out = append(out, m)
		}
	}
	return out, nil
}

// RootMessages counts the messages (merged repeats included) sent under
// lineage root: those of the index and the archived ones.
func (s *State) RootMessages(root string) int {
	n := s.arch.PerRoot[root]
	for _, m := range s.Messages {
		if m.Root == root {
			n += 1 + m.Merged
		}
	}
	return n
}

// lookup returns task id from the index, or its archived entry's view
// (hot fields only), without reading records or promoting; nil if none.
func (s *State) lookup(id string) *Task {
	if t, ok := s.Tasks[id]; ok {
		return t
	}
	if len(s.arch.Tasks) == 0 {
		return nil
	}
	e, _, err := s.archived(id)
	if err != nil || e == nil {
		return nil
	}
	return e.task()
}
