// The index last decoded, kept so that a load of the same bytes does not
// decode them again.

package state

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// lastIndex is, per process, the index file this process decoded or
// wrote last and the exact bytes it came from (or went to). A dispatch loads the index about ten
// times, and in a busy state directory (a few hundred tasks in the index)
// decoding it was most of its CPU (docs/benchmarks.md); when nothing was
// written in between, by this process or another, the bytes are the same
// and a copy of the decoded index is the same value, made without
// encoding/json. What a load hands out is always a copy of its own: the
// State it becomes takes the index's maps and slices, and changes them.
var lastIndex decoded

// decoded is an index file's bytes and the index they decode to.
type decoded struct {
	mu  sync.Mutex
	dir string
	raw []byte
	ix  *indexFile // never handed out: copied for each load; nil: none kept
	// ours: raw is what this process wrote as dir's index file, byte for
	// byte: what json.Marshal made of an index, so valid JSON laid out as
	// runner lays it out (ReadTask's short way trusts those bytes without
	// checking them again, see indexEntry). It holds whether or not ix is
	// still kept.
	ours bool
	// marshalled: ix is the index this process marshalled into raw, not
	// yet made what a decode gives (decodedIndex), which the first load of
	// raw does, if one comes.
	marshalled bool
}

// wrote keeps ix, which this process marshalled into raw and wrote as
// dir's index file: the next load of these bytes copies it rather than
// decode them (after a write, the writer's own next look at the state is
// the common case: a dispatch writes five times and loads after each).
// ix is the keeper's own (a clone).
func (d *decoded) wrote(dir string, raw []byte, ix *indexFile) {
	d.mu.Lock()
	d.dir, d.raw, d.ix, d.ours, d.marshalled = dir, raw, ix, true, true
	d.mu.Unlock()
}

// isOurs reports whether raw, read from dir's index file, is what this
// process wrote there last. Only the last write is known: a load finds
// the same bytes if nothing was written since, by any process.
func (d *decoded) isOurs(dir string, raw []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ours && d.dir == dir && bytes.Equal(d.raw, raw)
}

// forget drops the kept index (the bytes, and whether they are ours,
// stay): the next load decodes (tests and benchmarks).
func (d *decoded) forget() {
	d.mu.Lock()
	d.ix = nil
	d.mu.Unlock()
}

// same is a copy of the kept index when raw, dir's index file, is what it
// was made from; nil otherwise.
func (d *decoded) same(dir string, raw []byte) *indexFile {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ix == nil || d.dir != dir || !bytes.Equal(d.raw, raw) {
		return nil
	}
	if d.marshalled {
		d.marshalled = false
		if d.ix = decodedIndex(d.ix, d.raw); d.ix == nil {
			return nil
		}
	}
	return d.ix.clone()
}

// indexDecodes counts the decodes of an index file (tests).
var indexDecodes atomic.Int64

// decodeIndex decodes raw, the index file of the state directory dir, or
// copies the index decoded from the same bytes last. keep: what it
// decodes is kept (a copy) for the next load; a load under the lock for
// a write keeps nothing, as its write replaces the file at once (and the
// copy would lengthen the lock's hold).
func decodeIndex(dir string, raw []byte, keep bool) (*indexFile, error) {
	if ix := lastIndex.same(dir, raw); ix != nil {
		return ix, nil
	}
	ix := new(indexFile)
	if err := json.Unmarshal(raw, ix); err != nil {
		return nil, err
	}
	indexDecodes.Add(1)
	if !keep {
		return ix, nil
	}
	kept := ix.clone()
	lastIndex.mu.Lock()
	// The same bytes as this process's last write (the index kept from it
	// was dropped) stay marked as ours.
	ours := lastIndex.ours && lastIndex.dir == dir && bytes.Equal(lastIndex.raw, raw)
	lastIndex.dir, lastIndex.raw, lastIndex.ix = dir, bytes.Clone(raw), kept
	lastIndex.ours, lastIndex.marshalled = ours, false
	lastIndex.mu.Unlock()
	return ix, nil
}

// clone is a deep copy of ix: it shares no map, slice or pointer with it
// (TestIndexCloneDeep holds every field to that).
func (ix *indexFile) clone() *indexFile {
	c := *ix
	c.Projects = cloneMap(ix.Projects, func(p *Project) *Project { return clonePtr(p) })
	c.Tasks = cloneMap(ix.Tasks, (*entry).clone)
	c.Messages = cloneMap(ix.Messages, func(m *Message) *Message { return clonePtr(m) })
	c.Archive = ix.Archive.clone()
	c.Retired = slices.Clone(ix.Retired)
	c.Applied = slices.Clone(ix.Applied)
	c.Sandboxed = slices.Clone(ix.Sandboxed)
	return &c
}

// clone is a deep copy of a.
func (a archiveIndex) clone() archiveIndex {
	a.Tasks = slices.Clone(a.Tasks)
	a.Messages = slices.Clone(a.Messages)
	a.PerRoot = maps.Clone(a.PerRoot)
	return a
}

// clone is a deep copy of e (nil for nil).
func (e *entry) clone() *entry {
	if e == nil {
		return nil
	}
	c := *e
	c.Tmux = slices.Clone(e.Tmux)
	c.After = slices.Clone(e.After)
	c.Handling = slices.Clone(e.Handling)
	c.Ports = slices.Clone(e.Ports)
	c.Started = clonePtr(e.Started)
	c.Ended = clonePtr(e.Ended)
	c.Exit = clonePtr(e.Exit)
	c.Reclaimed = clonePtr(e.Reclaimed)
	c.Spend = clonePtr(e.Spend)
	return &c
}

// cloneMap copies m, each value by cp (nil for nil).
func cloneMap[V any](m map[string]V, cp func(V) V) map[string]V {
	if m == nil {
		return nil
	}
	c := make(map[string]V, len(m))
	for k, v := range m {
		c[k] = cp(v)
	}
	return c
}

// clonePtr copies what p points to into a new value (nil for nil): for
// structs of values only (Project, Message, Spend).
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
