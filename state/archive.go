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

// segment is a segment file's content: task entries or messages.
type segment[T any] struct {
	Items []T `json:"items"`
}

// segKind is what the generic segment code needs to know of an item: the
// prefix of its segment files, and its time (ended, delivered) in Unix ns.
type segKind[T any] struct {
	prefix string
	at     func(T) int64
}

var (
	taskKind    = segKind[*entry]{prefix: "", at: func(e *entry) int64 { return e.ended().UnixNano() }}
	messageKind = segKind[*Message]{prefix: "m", at: func(m *Message) int64 { return m.Delivered.UnixNano() }}
)

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

// readAll reads the items of the segments refs, oldest segment first, and
// the segment each came from. Segments not cached are decoded in parallel
// (a fresh process listing 10 000 tasks).
func readAll[T any](dir string, refs []segmentRef) ([]T, []int, error) {
	segs := make([]*segment[T], len(refs))
	errs := make([]error, len(refs))
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			segs[i], errs[i] = readSegment[segment[T]](dir, ref.File)
		}()
	}
	wg.Wait()
	var out []T
	var from []int
	for i, seg := range segs {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		for _, it := range seg.Items {
			out = append(out, it)
			from = append(from, i)
		}
	}
	return out, from, nil
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
	if s.promoted == nil {
		s.promoted = map[string]string{}
	}
	s.promoted[e.ID] = s.arch.Tasks[seg].File
	return t, nil
}

// segmentWriter collects the files one write adds and retires. Its files
// are named after the write's generation (and tag, for a repair's own
// files), so no two writes name a file alike.
type segmentWriter struct {
	dir     string
	gen     uint64
	tag     string
	n       int // files written so far in this write
	added   []string
	retired []string
}

func (w *segmentWriter) name(prefix string) string {
	w.n++
	name := prefix + strconv.FormatUint(w.gen, 10) + w.tag
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
		es = append(es, toEntry(t, b.gen))
		delete(s.Tasks, t.ID)
	}
	return s.addTaskSegments(w, es)
}

// newSegment writes items (if any) as a new segment and returns its ref.
func newSegment[T any](w *segmentWriter, k segKind[T], items []T) (segmentRef, bool, error) {
	if len(items) == 0 {
		return segmentRef{}, false, nil
	}
	name := w.name(k.prefix)
	if err := writeSegment(w.dir, name, segment[T]{Items: items}); err != nil {
		return segmentRef{}, false, err
	}
	ref := segmentRef{File: name, N: len(items), First: 1<<63 - 1}
	for _, it := range items {
		at := k.at(it)
		ref.First, ref.Last = min(ref.First, at), max(ref.Last, at)
	}
	w.added = append(w.added, name)
	return ref, true, nil
}

// rewriteSegments rewrites the segments of refs that touch selects and
// that hold an item keep refuses, without those items, and returns the new
// list.
func rewriteSegments[T any](w *segmentWriter, k segKind[T], refs []segmentRef, touch func(segmentRef) bool, keep func(T) bool) ([]segmentRef, error) {
	var out []segmentRef
	for _, ref := range refs {
		if !touch(ref) {
			out = append(out, ref)
			continue
		}
		seg, err := readSegment[segment[T]](w.dir, ref.File)
		if err != nil {
			return nil, err
		}
		var kept []T
		for _, it := range seg.Items {
			if keep(it) {
				kept = append(kept, it)
			}
		}
		if len(kept) == len(seg.Items) {
			out = append(out, ref)
			continue
		}
		w.retired = append(w.retired, filepath.Join(archiveDir, ref.File))
		nref, ok, err := newSegment(w, k, kept)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, nref)
		}
	}
	return out, nil
}

// mergeSegments merges adjacent segments while there are more than
// maxSegments, smallest pair first, up to segmentMax items each.
func mergeSegments[T any](w *segmentWriter, k segKind[T], refs []segmentRef) ([]segmentRef, error) {
	for len(refs) > maxSegments {
		i := smallestPair(refs)
		if i < 0 {
			break
		}
		items, _, err := readAll[T](w.dir, refs[i:i+2])
		if err != nil {
			return nil, err
		}
		for _, ref := range refs[i : i+2] {
			w.retired = append(w.retired, filepath.Join(archiveDir, ref.File))
		}
		ref, _, err := newSegment(w, k, items)
		if err != nil {
			return nil, err
		}
		refs = slices.Concat(refs[:i], []segmentRef{ref}, refs[i+2:])
	}
	return refs, nil
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

// addTaskSegments writes es, oldest first, as new segments of at most
// segmentMax entries.
func (s *State) addTaskSegments(w *segmentWriter, es []*entry) error {
	slices.SortFunc(es, func(a, b *entry) int { return cmpInt(a.Created, b.Created) })
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
		return cmpString(a.key, b.key)
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
