// Writing the state, in the order that keeps every acknowledged update and
// never names a file that is not durable: records, archive segments, then
// the index.

package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// writeData writes the new state into the temporary file. Tests swap it to
// inject failures such as ENOSPC.
var writeData = func(f *os.File, b []byte) error {
	_, err := f.Write(b)
	return err
}

// index returns the index file of st, each task's entry naming its record
// generation in st.base.
func (st *State) index() *indexFile {
	ix := &indexFile{
		Version: st.fileVersion(), Generation: st.Generation, Updated: st.Updated,
		Projects: st.Projects, Tasks: make(map[string]*entry, len(st.Tasks)),
		Messages: st.Messages, Archive: st.arch, Retired: st.retired, Applied: st.applied, EventSeq: st.EventSeq,
	}
	for id, t := range st.Tasks {
		ix.Tasks[id] = st.entryOf(t, st.base[id].gen)
	}
	if list, ok := st.sandboxedList(); ok {
		ix.Sandboxed, ix.SandboxedAt = list, st.Generation
	}
	return ix
}

// fileVersion is the version st is written as: 4 when a project or a
// task of the index is on a host, else 3 (see Version).
func (st *State) fileVersion() int {
	for _, p := range st.Projects {
		if p.Host != "" {
			return Version
		}
	}
	for _, t := range st.Tasks {
		if t.Tmux.Host != "" || t.Tmux.Pool != "" {
			return Version
		}
	}
	return indexVersion
}

// writeResult is what a write did, for the caller to finish once the
// index is durable.
type writeResult struct {
	renamed bool
	// synced is set when the state directory was fsynced already (under
	// the lock, for handed-over changes).
	synced bool
	// remove lists the files (relative to the state directory) no index
	// names any more: superseded records and segments.
	remove []string
	// pruned lists the tasks whose files go too.
	pruned []string
}

// write writes st unless nothing changed since raw (the bytes load read):
// first the records of the tasks whose bulk changed and the new archive
// segments (each fsynced, then their directories), then the index (temp
// file, fsync, rename). The caller fsyncs the state directory to make the
// rename durable, then removes res.remove. Called with the lock held.
func (s *Store) write(st *State, raw []byte, now time.Time) (res writeResult, err error) {
	if err := st.checkLazy(); err != nil {
		return res, err
	}
	var changed []*Task
	for id, t := range st.Tasks {
		if b, ok := st.base[id]; !ok || !sameBulk(b.rec, t) {
			changed = append(changed, t)
		}
	}
	if len(changed) == 0 && len(st.promoted) == 0 && !st.pruneNow && len(st.emitted) == 0 && raw != nil && st.Version == st.fileVersion() {
		b, err := json.Marshal(st.index())
		if err != nil {
			return res, fmt.Errorf("encode state: %w", err)
		}
		if bytes.Equal(append(b, '\n'), raw) {
			return res, nil
		}
	}
	gen := st.Generation + 1
	// The events of the changes, numbered before the index records the
	// last cursor (writeRecords moves the base on).
	var evs []StreamEvent
	if !st.quietEvents {
		evs = st.streamEvents()
	}
	seq := st.EventSeq
	st.numberEvents(evs)
	defer func() {
		if err != nil {
			st.EventSeq = seq
		}
	}()
	res.remove = append(res.remove, st.retired...) // what the last write retired
	var pend pendingSync
	defer pend.abort()
	retired, err := s.writeRecords(st, changed, gen, &pend)
	if err != nil {
		return res, err
	}
	more, pruned, err := s.pruneAndArchive(st, gen, now)
	if err != nil {
		return res, err
	}
	retired, res.pruned = append(retired, more...), pruned
	if st.legacy != 0 {
		if err := s.keepLegacy(st.legacy); err != nil {
			return res, err
		}
	}
	st.Version, st.Generation, st.Updated, st.retired = st.fileVersion(), gen, now, retired
	st.pruneNow, st.legacy = false, 0
	ix := st.index()
	b, err := json.Marshal(ix)
	if err != nil {
		return res, fmt.Errorf("encode state: %w", err)
	}
	data := append(b, '\n')
	if err := s.writeFile(data, &pend); err != nil {
		return res, err
	}
	lastIndex.wrote(s.dir, data, ix.clone())
	res.renamed = true
	res.remove = append(res.remove, retired...)
	// The changes are written: their events follow (a failure here, or a
	// crash just before, leaves a gap in the cursors, never an event of a
	// change that was not made).
	_ = s.appendEvents(evs)
	st.quietEvents, st.emitted = false, nil
	st.msgBase = make(map[string]MessageStatus, len(st.Messages))
	for id, m := range st.Messages {
		st.msgBase[id] = m.Status
	}
	return res, nil
}

// writeRecords writes the records of generation gen of the changed tasks
// and makes them durable (one syncfs for many), or leaves them in pend
// (files and the tasks directory) for writeFile to fsync with the index,
// and returns the records they supersede.
func (s *Store) writeRecords(st *State, changed []*Task, gen uint64, pend *pendingSync) (retired []string, err error) {
	if len(changed) == 0 {
		return nil, nil
	}
	if st.base == nil {
		st.base = map[string]baseOf{}
	}
	many := haveSyncFS && len(changed) > manyRecords
	for _, t := range changed {
		if old, ok := st.base[t.ID]; ok {
			retired = append(retired, recordRel(t.ID, old.gen))
		}
		if many {
			_, err = writeRecord(s.dir, t, gen, true)
		} else {
			err = writeRecordPending(s.dir, t, gen, pend)
		}
		if err != nil {
			return nil, err
		}
		st.base[t.ID] = baseOf{rec: records.get(s.dir, t.ID, gen), gen: gen}
	}
	tasksDir := filepath.Join(s.dir, "tasks")
	if !many {
		pend.dirs = append(pend.dirs, tasksDir)
		return retired, nil
	}
	err = syncPath(tasksDir)
	if err == nil && many {
		err = syncFS(tasksDir)
	}
	if err != nil {
		return nil, fmt.Errorf("fsync %s: %w (the previous state is intact)", tasksDir, err)
	}
	return retired, nil
}

// pruneAndArchive drops the tasks and messages past the retention (or
// Prune's cutoff) and moves what the index no longer needs to the archive
// (new segments durable before the index names them). It returns the files
// no longer named, and the pruned tasks (whose files go too).
func (s *Store) pruneAndArchive(st *State, gen uint64, now time.Time) (retired, pruned []string, err error) {
	var cutoff time.Time
	if s.Retention > 0 {
		cutoff = now.Add(-s.Retention)
	}
	step := s.Retention / 24
	if st.pruneNow {
		cutoff, step = st.pruneCutoff, 0
	}
	for _, id := range prune(st, cutoff) {
		retired = append(retired, recordRel(id, st.base[id].gen))
		delete(st.base, id)
		pruned = append(pruned, id)
	}
	pruneMessages(st, cutoff)
	keep := s.ArchiveAfter
	if keep <= 0 {
		keep = DefaultArchiveAfter
	}
	w := &segmentWriter{dir: s.dir, gen: gen}
	gone, err := st.archive(w, keep, cutoff, step)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range gone {
		retired = append(retired, recordRel(e.ID, e.Record))
		pruned = append(pruned, e.ID)
	}
	for id := range st.base {
		if _, ok := st.Tasks[id]; !ok {
			delete(st.base, id) // archived: its record stays, named by its segment
		}
	}
	if len(w.added) > 0 {
		if err := syncPath(filepath.Join(s.dir, archiveDir)); err != nil {
			return nil, nil, fmt.Errorf("fsync %s: %w", filepath.Join(s.dir, archiveDir), err)
		}
	}
	return append(retired, w.retired...), pruned, nil
}

// manyRecords is how many records one write fsyncs one by one; past it,
// one syncfs(2) of the file system is cheaper.
const manyRecords = 16

// recordRel is the path of a record relative to the state directory.
func recordRel(id string, gen uint64) string {
	return filepath.Join("tasks", id+"."+strconv.FormatUint(gen, 10)+".json")
}

// writeFile replaces state.json with data: temp file, fsync (at once with
// what pend holds: the new records and their directory), keep the
// previous generation, rename. The caller fsyncs the directory.
func (s *Store) writeFile(data []byte, pend *pendingSync) (err error) {
	cur, tmp := s.Path(), s.path(tmpFile)
	f, err := openFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write state file %s: %w (the previous state is intact)", cur, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write state file %s: %w (the previous state is intact)", cur, err)
		}
	}()
	if err := writeData(f, data); err != nil {
		return err
	}
	if err := pend.run(f.Sync); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := s.keepPrevious(); err != nil {
		return err
	}
	if err := os.Rename(tmp, cur); err != nil {
		return err
	}
	return nil
}

// keepPrevious hard-links the current state.json as state.json.prev, for
// Repair. A missing state.json is not an error.
func (s *Store) keepPrevious() error {
	ptmp := s.path(prevFile + ".tmp")
	os.Remove(ptmp)
	if err := os.Link(s.Path(), ptmp); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("keep previous state: %w", err)
	}
	if err := os.Rename(ptmp, s.path(prevFile)); err != nil {
		return fmt.Errorf("keep previous state: %w", err)
	}
	return nil
}

// syncDir makes the renames in the state directory durable.
func (s *Store) syncDir() error {
	d, err := os.Open(s.dir)
	if err == nil {
		err = d.Sync()
		d.Close()
	}
	if err != nil {
		return fmt.Errorf("fsync state directory %s: %w (the update may not survive a crash)", s.dir, err)
	}
	return nil
}
