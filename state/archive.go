package state

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// The archive keeps what the index no longer needs to carry: finished tasks
// whose window is closed (beyond the newest ArchiveAfter of them) and
// finished messages (beyond the newest MessagesKept). They go, a batch at
// a time, into immutable segment files under archive/ — a new segment per
// batch, named after the generation that wrote it — which the index lists.
// Segments are merged when there are more than maxSegments (up to
// segmentMax entries each), and rewritten without their expired entries
// when the retention cutoff has moved on by a step (Retention/24), so an
// ordinary update writes no segment at all.
//
// A task is in exactly one place: the index or one segment. Reading it
// back into the index (State.Task inside an Update, say a follow-up sent
// to an archived task) takes it out of its segment.

// DefaultArchiveAfter is how many finished tasks with no window the index
// keeps before it moves the older ones to the archive.
const DefaultArchiveAfter = 10

// MessagesKept is how many finished messages the index keeps; older ones
// go to the archive.
const MessagesKept = 50

const (
	maxSegments = 8
	segmentMax  = 2500
	archiveDir  = "archive"
)

// archiveIndex is the index's list of segments.
type archiveIndex struct {
	Tasks    []segmentRef `json:"tasks,omitempty"`
	Messages []segmentRef `json:"messages,omitempty"`
	// PerRoot counts the archived messages (merged repeats included) of
	// each lineage root, for the per-root cap.
	PerRoot map[string]int `json:"per_root,omitempty"`
	// PrunedBefore is the retention cutoff (Unix ns) the segments were
	// last pruned to.
	PrunedBefore int64 `json:"pruned_before,omitempty"`
}

// archivedEntries reads every archived task entry, with the segment each
// came from.
func (s *State) archivedEntries() ([]*entry, []int, error) {
	return readAll[*entry](s.dir, s.arch.Tasks)
}

// archived returns the archived entry of task id, or nil.
func (s *State) archived(id string) (*entry, int, error) {
	es, from, err := s.archivedEntries()
	if err != nil {
		return nil, 0, err
	}
	for i, e := range es {
		if e.ID == id {
			return e, from[i], nil
		}
	}
	return nil, 0, nil
}

// promote brings archived task e (from segment seg) back into the index
// with its whole record, and returns it; the segment is rewritten without
// it by the write. Outside an Update it only returns the task.
func (s *State) promote(e *entry, seg int) (*Task, error) {
	rec, err := readRecord(s.dir, e.ID, e.Record)
	if err != nil {
		return nil, fmt.Errorf("read the record of archived task %s: %w", e.ID, err)
	}
	t := rec.clone()
	e.applyHot(t)
	if !s.writable {
		return t, nil
	}
	s.Tasks[e.ID] = t
	s.base[e.ID] = baseOf{rec: rec, gen: e.Record}
	delete(s.lazy, e.ID)
	if s.promoted == nil {
		s.promoted = map[string]string{}
	}
	s.promoted[e.ID] = s.arch.Tasks[seg].File
	return t, nil
}

// archive moves what the index no longer needs into new segments, merges
// segments past maxSegments and prunes expired entries once the cutoff
// moved by a step. It returns the tasks pruned (their files go once the
// write is durable).
func (s *State) archive(w *segmentWriter, keep int, cutoff time.Time, step time.Duration) (pruned []*entry, err error) {
	// Take promoted tasks out of their segments.
	if len(s.promoted) > 0 {
		promoted := map[string]bool{}
		for _, file := range s.promoted {
			promoted[file] = true
		}
		s.arch.Tasks, err = rewriteSegments(w, taskKind, s.arch.Tasks,
			func(ref segmentRef) bool { return promoted[ref.File] },
			func(e *entry) bool { return s.promoted[e.ID] == "" })
		if err != nil {
			return nil, err
		}
		s.promoted = nil
	}
	if err := s.archiveFinishedTasks(w, keep); err != nil {
		return nil, err
	}
	if err := s.archiveMessages(w); err != nil {
		return nil, err
	}
	if !cutoff.IsZero() && cutoff.UnixNano()-s.arch.PrunedBefore >= int64(step) {
		if pruned, err = s.pruneArchive(w, cutoff.UnixNano()); err != nil {
			return nil, err
		}
		s.arch.PrunedBefore = cutoff.UnixNano()
	}
	if s.arch.Tasks, err = mergeSegments(w, taskKind, s.arch.Tasks); err != nil {
		return nil, err
	}
	s.arch.Messages, err = mergeSegments(w, messageKind, s.arch.Messages)
	return pruned, err
}

// archivable reports whether task t may leave the index: finished, with
// no window left to close.
func archivable(t *Task) bool {
	return t.Status.IsTerminal() && (!t.Reclaimed.IsZero() || t.Tmux.Pane == "")
}

// archiveFinishedTasks moves the archivable tasks beyond the newest keep
// into one new segment, once there are twice keep of them (so a segment
// holds at least keep+1 entries).
func (s *State) archiveFinishedTasks(w *segmentWriter, keep int) error {
	cand := beyondNewest(s.Tasks, archivable, keep, func(t *Task) time.Time { return t.Ended })
	var es []*entry
	for _, t := range cand {
		b, ok := s.base[t.ID]
		if !ok || !sameBulk(b.rec, t) {
			return fmt.Errorf("archive task %s: its record is not written yet", t.ID)
		}
		es = append(es, s.entryOf(t, b.gen))
		delete(s.Tasks, t.ID)
	}
	return s.addTaskSegments(w, es)
}

// addTaskSegments writes es, oldest first, as new segments of at most
// segmentMax entries.
func (s *State) addTaskSegments(w *segmentWriter, es []*entry) error {
	slices.SortFunc(es, func(a, b *entry) int { return cmp.Compare(a.Created, b.Created) })
	for len(es) > 0 {
		n := min(len(es), segmentMax)
		ref, ok, err := newSegment(w, taskKind, es[:n])
		if err != nil {
			return err
		}
		if ok {
			s.arch.Tasks = append(s.arch.Tasks, ref)
		}
		es = es[n:]
	}
	return nil
}

// beyondNewest returns, oldest first, the items that want selects beyond
// the newest keep of them (by at; ties by key), once more than twice keep
// are selected: so a batch moved to the archive holds at least keep+1.
func beyondNewest[T any](items map[string]T, want func(T) bool, keep int, at func(T) time.Time) []T {
	type kv struct {
		key string
		v   T
	}
	var sel []kv
	for k, v := range items {
		if want(v) {
			sel = append(sel, kv{k, v})
		}
	}
	if len(sel) <= 2*keep {
		return nil
	}
	slices.SortFunc(sel, func(a, b kv) int {
		if c := at(a.v).Compare(at(b.v)); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	out := make([]T, 0, len(sel)-keep)
	for _, x := range sel[:len(sel)-keep] {
		out = append(out, x.v)
	}
	return out
}

// finishedMessage reports whether m no longer changes.
func finishedMessage(m *Message) bool {
	return m.Status != MessagePending && m.Status != MessageDelivering
}

// archiveMessages moves the finished messages beyond the newest
// MessagesKept into a new segment, once there are twice as many.
func (s *State) archiveMessages(w *segmentWriter) error {
	out := beyondNewest(s.Messages, finishedMessage, MessagesKept, func(m *Message) time.Time { return m.Delivered })
	for _, m := range out {
		delete(s.Messages, m.ID)
		if m.Root != "" {
			if s.arch.PerRoot == nil {
				s.arch.PerRoot = map[string]int{}
			}
			s.arch.PerRoot[m.Root] += 1 + m.Merged
		}
	}
	ref, ok, err := newSegment(w, messageKind, out)
	if ok {
		s.arch.Messages = append(s.arch.Messages, ref)
	}
	return err
}

// pruneArchive drops the archived tasks and messages that ended before
// cutoff (Unix ns), with the messages' per-root counts, and returns the
// tasks dropped.
func (s *State) pruneArchive(w *segmentWriter, cutoff int64) (pruned []*entry, err error) {
	old := func(ref segmentRef) bool { return ref.First < cutoff }
	s.arch.Tasks, err = rewriteSegments(w, taskKind, s.arch.Tasks, old, func(e *entry) bool {
		if e.Ended != nil && e.Created+*e.Ended < cutoff {
			pruned = append(pruned, e)
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	s.arch.Messages, err = rewriteSegments(w, messageKind, s.arch.Messages, old, func(m *Message) bool {
		if m.Delivered.UnixNano() >= cutoff {
			return true
		}
		if m.Root != "" && s.arch.PerRoot != nil {
			if s.arch.PerRoot[m.Root] -= 1 + m.Merged; s.arch.PerRoot[m.Root] <= 0 {
				delete(s.arch.PerRoot, m.Root)
			}
		}
		return false
	})
	return pruned, err
}

// archivedMessages reads every archived message.
func (s *State) archivedMessages() ([]*Message, error) {
	ms, _, err := readAll[*Message](s.dir, s.arch.Messages)
	return ms, err
}
