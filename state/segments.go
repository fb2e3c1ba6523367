// Segment files: immutable JSON files of task entries or messages, read
// through a process-wide cache, written once, merged and rewritten whole.

package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
)

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
var segments = &segmentCache{} // its map is made on first use: a map literal here is built in every process's init

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
	if c.m == nil {
		c.m = map[string]any{}
	}
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
	b, err := readFile(p)
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

// removeFiles removes files of the state directory given by their paths
// relative to it; missing ones are no error.
func removeFiles(dir string, rel []string) {
	for _, r := range rel {
		_ = os.Remove(filepath.Join(dir, r))
	}
}
