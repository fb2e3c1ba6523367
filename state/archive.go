package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
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

// segmentRef names a segment and what it holds: N entries that ended
// between First and Last (Unix ns).
type segmentRef struct {
	File  string `json:"f"`
	N     int    `json:"n"`
	First int64  `json:"first"`
	Last  int64  `json:"last"`
}

// taskSegment and messageSegment are the segment files' content.
type taskSegment struct {
	Tasks []*entry `json:"tasks"`
}

type messageSegment struct {
	Messages []*Message `json:"messages"`
}

// segments caches decoded segment files for the process; a segment never
// changes once written, so an entry stays valid while the file exists.
var segments = &segmentCache{m: map[string]any{}}

type segmentCache struct {
	mu sync.Mutex
	m  map[string]any
}

func (c *segmentCache) get(path string) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[path]
}

func (c *segmentCache) put(path string, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 4*maxSegments {
		clear(c.m)
	}
	c.m[path] = v
}

// readSegment decodes the segment file name of dir into v's type (through
// the cache).
func readSegment[T any](dir, name string) (*T, error) {
	p := filepath.Join(dir, archiveDir, name)
	if v, ok := segments.get(p).(*T); ok {
		return v, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read archive segment %s: %w", p, err)
	}
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, &CorruptError{Path: p, Err: err}
	}
	segments.put(p, v)
	return v, nil
}

// writeSegment writes a new segment file (fsynced; the caller fsyncs the
// archive directory) and returns its name.
func writeSegment(dir, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode archive segment %s: %w", name, err)
	}
	p := filepath.Join(dir, archiveDir, name)
	if err := writeSynced(p, append(b, '\n')); err != nil {
		return fmt.Errorf("write archive segment %s: %w", p, err)
	}
	segments.put(p, nil)
	return nil
}

// archivedEntries reads every archived task entry, oldest segment first,
// and returns them with the segment each came from. Segments not cached
// are decoded in parallel (a fresh process listing 10 000 tasks).
func (s *State) archivedEntries() ([]*entry, []int, error) {
	segs := make([]*taskSegment, len(s.arch.Tasks))
	errs := make([]error, len(s.arch.Tasks))
	var wg sync.WaitGroup
	for i, ref := range s.arch.Tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			segs[i], errs[i] = readSegment[taskSegment](s.dir, ref.File)
		}()
	}
	wg.Wait()
	var out []*entry
	var from []int
	for i, seg := range segs {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		for _, e := range seg.Tasks {
			out = append(out, e)
			from = append(from, i)
		}
	}
	return out, from, nil
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
	if s.promoted == nil {
		s.promoted = map[string]string{}
	}
	s.promoted[e.ID] = s.arch.Tasks[seg].File
	return t, nil
}

// segmentWriter collects the files one write adds and retires.
type segmentWriter struct {
	dir     string
	gen     uint64
	n       int // files written so far in this write
	added   []string
	retired []string
}

func (w *segmentWriter) name(prefix string) string {
	w.n++
	name := prefix + strconv.FormatUint(w.gen, 10)
	if w.n > 1 {
		name += "-" + strconv.Itoa(w.n)
	}
	return name + ".json"
}

// archive moves what the index no longer needs into new segments, merges
// segments past maxSegments and prunes expired entries once the cutoff
// moved by a step. It returns the tasks pruned (their files go once the
// write is durable).
func (s *State) archive(w *segmentWriter, keep int, cutoff time.Time, step time.Duration) (pruned []*entry, err error) {
	// Take promoted tasks out of their segments.
	if len(s.promoted) > 0 {
		if err := s.rewriteTaskSegments(w, func(e *entry) bool { return s.promoted[e.ID] == "" }); err != nil {
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
		c := cutoff.UnixNano()
		old := false
		for _, ref := range s.arch.Tasks {
			old = old || ref.First < c
		}
		if old {
			err := s.rewriteTaskSegments(w, func(e *entry) bool {
				if e.Ended != nil && e.Created+*e.Ended < c {
					pruned = append(pruned, e)
					return false
				}
				return true
			})
			if err != nil {
				return nil, err
			}
		}
		if err := s.pruneMessageSegments(w, c); err != nil {
			return nil, err
		}
		s.arch.PrunedBefore = c
	}
	if err := s.mergeTaskSegments(w); err != nil {
		return nil, err
	}
	return pruned, s.mergeMessageSegments(w)
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
	var cand []*Task
	for _, t := range s.Tasks {
		if archivable(t) {
			cand = append(cand, t)
		}
	}
	if len(cand) <= 2*keep {
		return nil
	}
	slices.SortFunc(cand, func(a, b *Task) int {
		if c := b.Ended.Compare(a.Ended); c != 0 {
			return c
		}
		return cmpString(a.ID, b.ID)
	})
	var es []*entry
	for _, t := range cand[keep:] {
		b, ok := s.base[t.ID]
		if !ok || !sameBulk(b.rec, t) {
			return fmt.Errorf("archive task %s: its record is not written yet", t.ID)
		}
		es = append(es, toEntry(t, b.gen))
		delete(s.Tasks, t.ID)
	}
	for len(es) > 0 {
		n := min(len(es), segmentMax)
		if err := s.addTaskSegment(w, es[:n]); err != nil {
			return err
		}
		es = es[n:]
	}
	return nil
}

func (s *State) addTaskSegment(w *segmentWriter, es []*entry) error {
	ref, ok, err := newTaskSegment(w, es)
	if ok {
		s.arch.Tasks = append(s.arch.Tasks, ref)
	}
	return err
}

// newTaskSegment writes es (if any) as a new segment and returns its ref.
func newTaskSegment(w *segmentWriter, es []*entry) (segmentRef, bool, error) {
	if len(es) == 0 {
		return segmentRef{}, false, nil
	}
	slices.SortFunc(es, func(a, b *entry) int { return cmpInt(a.Created, b.Created) })
	name := w.name("")
	if err := writeSegment(w.dir, name, taskSegment{Tasks: es}); err != nil {
		return segmentRef{}, false, err
	}
	ref := segmentRef{File: name, N: len(es), First: 1<<63 - 1}
	for _, e := range es {
		at := e.ended().UnixNano()
		ref.First, ref.Last = min(ref.First, at), max(ref.Last, at)
	}
	w.added = append(w.added, name)
	return ref, true, nil
}

// rewriteTaskSegments rewrites the segments that hold an entry keep
// refuses, without those entries.
func (s *State) rewriteTaskSegments(w *segmentWriter, keep func(*entry) bool) error {
	var refs []segmentRef
	for _, ref := range s.arch.Tasks {
		seg, err := readSegment[taskSegment](s.dir, ref.File)
		if err != nil {
			return err
		}
		var kept []*entry
		for _, e := range seg.Tasks {
			if keep(e) {
				kept = append(kept, e)
			}
		}
		if len(kept) == len(seg.Tasks) {
			refs = append(refs, ref)
			continue
		}
		w.retired = append(w.retired, filepath.Join(archiveDir, ref.File))
		nref, ok, err := newTaskSegment(w, kept)
		if err != nil {
			return err
		}
		if ok {
			refs = append(refs, nref)
		}
	}
	s.arch.Tasks = refs
	return nil
}

// mergeTaskSegments merges adjacent segments while there are more than
// maxSegments, smallest pair first, up to segmentMax entries each.
func (s *State) mergeTaskSegments(w *segmentWriter) error {
	for len(s.arch.Tasks) > maxSegments {
		i := smallestPair(s.arch.Tasks)
		if i < 0 {
			return nil
		}
		var es []*entry
		for _, ref := range s.arch.Tasks[i : i+2] {
			seg, err := readSegment[taskSegment](s.dir, ref.File)
			if err != nil {
				return err
			}
			es = append(es, seg.Tasks...)
			w.retired = append(w.retired, filepath.Join(archiveDir, ref.File))
		}
		rest := slices.Clone(s.arch.Tasks[i+2:])
		s.arch.Tasks = s.arch.Tasks[:i]
		if err := s.addTaskSegment(w, es); err != nil {
			return err
		}
		s.arch.Tasks = append(s.arch.Tasks, rest...)
	}
	return nil
}

// smallestPair returns the index of the adjacent pair of segments with the
// fewest entries together, if they fit in segmentMax; else -1.
func smallestPair(refs []segmentRef) int {
	best, at := segmentMax+1, -1
	for i := 0; i+1 < len(refs); i++ {
		if n := refs[i].N + refs[i+1].N; n < best {
			best, at = n, i
		}
	}
	return at
}

// finishedMessage reports whether m no longer changes.
func finishedMessage(m *Message) bool {
	return m.Status != MessagePending && m.Status != MessageDelivering
}

// archiveMessages moves the finished messages beyond the newest
// MessagesKept into a new segment, once there are twice as many.
func (s *State) archiveMessages(w *segmentWriter) error {
	var done []*Message
	for _, m := range s.Messages {
		if finishedMessage(m) {
			done = append(done, m)
		}
	}
	if len(done) <= 2*MessagesKept {
		return nil
	}
	slices.SortFunc(done, func(a, b *Message) int {
		if c := a.Delivered.Compare(b.Delivered); c != 0 {
			return c
		}
		return cmpString(a.ID, b.ID)
	})
	out := done[:len(done)-MessagesKept]
	for _, m := range out {
		delete(s.Messages, m.ID)
		if m.Root != "" {
			if s.arch.PerRoot == nil {
				s.arch.PerRoot = map[string]int{}
			}
			s.arch.PerRoot[m.Root] += 1 + m.Merged
		}
	}
	return s.addMessageSegment(w, out)
}

func (s *State) addMessageSegment(w *segmentWriter, ms []*Message) error {
	ref, ok, err := newMessageSegment(w, ms)
	if ok {
		s.arch.Messages = append(s.arch.Messages, ref)
	}
	return err
}

// newMessageSegment writes ms (if any) as a new segment and returns its ref.
func newMessageSegment(w *segmentWriter, ms []*Message) (segmentRef, bool, error) {
	if len(ms) == 0 {
		return segmentRef{}, false, nil
	}
	name := w.name("m")
	if err := writeSegment(w.dir, name, messageSegment{Messages: ms}); err != nil {
		return segmentRef{}, false, err
	}
	ref := segmentRef{File: name, N: len(ms), First: 1<<63 - 1}
	for _, m := range ms {
		at := m.Delivered.UnixNano()
		ref.First, ref.Last = min(ref.First, at), max(ref.Last, at)
	}
	w.added = append(w.added, name)
	return ref, true, nil
}

// pruneMessageSegments drops the archived messages delivered before
// cutoff (Unix ns), with their per-root counts.
func (s *State) pruneMessageSegments(w *segmentWriter, cutoff int64) error {
	var refs []segmentRef
	for _, ref := range s.arch.Messages {
		if ref.First >= cutoff {
			refs = append(refs, ref)
			continue
		}
		seg, err := readSegment[messageSegment](s.dir, ref.File)
		if err != nil {
			return err
		}
		var kept []*Message
		for _, m := range seg.Messages {
			if m.Delivered.UnixNano() >= cutoff {
				kept = append(kept, m)
			} else if m.Root != "" && s.arch.PerRoot != nil {
				if s.arch.PerRoot[m.Root] -= 1 + m.Merged; s.arch.PerRoot[m.Root] <= 0 {
					delete(s.arch.PerRoot, m.Root)
				}
			}
		}
		w.retired = append(w.retired, filepath.Join(archiveDir, ref.File))
		nref, ok, err := newMessageSegment(w, kept)
		if err != nil {
			return err
		}
		if ok {
			refs = append(refs, nref)
		}
	}
	s.arch.Messages = refs
	return nil
}

// mergeMessageSegments is mergeTaskSegments for the message segments.
func (s *State) mergeMessageSegments(w *segmentWriter) error {
	for len(s.arch.Messages) > maxSegments {
		i := smallestPair(s.arch.Messages)
		if i < 0 {
			return nil
		}
		var ms []*Message
		for _, ref := range s.arch.Messages[i : i+2] {
			seg, err := readSegment[messageSegment](s.dir, ref.File)
			if err != nil {
				return err
			}
			ms = append(ms, seg.Messages...)
			w.retired = append(w.retired, filepath.Join(archiveDir, ref.File))
		}
		rest := slices.Clone(s.arch.Messages[i+2:])
		s.arch.Messages = s.arch.Messages[:i]
		if err := s.addMessageSegment(w, ms); err != nil {
			return err
		}
		s.arch.Messages = append(s.arch.Messages, rest...)
	}
	return nil
}

// archivedMessages reads every archived message.
func (s *State) archivedMessages() ([]*Message, error) {
	var out []*Message
	for _, ref := range s.arch.Messages {
		seg, err := readSegment[messageSegment](s.dir, ref.File)
		if err != nil {
			return nil, err
		}
		out = append(out, seg.Messages...)
	}
	return out, nil
}

// removeFiles removes files of the state directory given by their paths
// relative to it; missing ones are no error.
func removeFiles(dir string, rel []string) {
	for _, r := range rel {
		_ = os.Remove(filepath.Join(dir, r))
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
