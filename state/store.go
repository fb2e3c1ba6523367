package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// File names inside the state directory.
const (
	StateFile   = "state.json"
	LockFile    = "state.lock"
	JournalFile = "journal.jsonl"
	prevFile    = "state.json.prev"
	tmpFile     = "state.json.tmp"
)

// Defaults for a new Store.
const (
	DefaultLockTimeout     = 10 * time.Second
	DefaultRetention       = 24 * time.Hour
	DefaultJournalMaxBytes = 8 << 20
	DefaultJournalKeep     = 3
)

// writeData writes the new state into the temporary file. Tests swap it to
// inject failures such as ENOSPC.
var writeData = func(f *os.File, b []byte) error {
	_, err := f.Write(b)
	return err
}

// DefaultDir returns the state directory: $RUNNER_STATE_DIR if set, else
// $XDG_STATE_HOME/runner, else ~/.local/state/runner. getenv is usually
// os.Getenv; HOME is read through it too.
func DefaultDir(getenv func(string) string) (string, error) {
	if d := getenv("RUNNER_STATE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "runner"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("cannot find the state directory: HOME is not set (set RUNNER_STATE_DIR or HOME)")
	}
	return filepath.Join(home, ".local", "state", "runner"), nil
}

// Store is the state directory. Its methods are safe to call from many
// goroutines and many processes at once.
type Store struct {
	dir string

	// LockTimeout is how long Update and Repair wait for the lock before
	// failing with ErrBusy.
	LockTimeout time.Duration
	// Retention is how long finished tasks are kept: every Update prunes
	// terminal tasks that ended longer ago than this. Zero or less disables
	// pruning during updates.
	Retention time.Duration
	// JournalMaxBytes is the size past which the journal is rotated;
	// JournalKeep is how many rotated files (journal.jsonl.1 …) are kept.
	JournalMaxBytes int64
	JournalKeep     int
	// ArchiveAfter is how many finished tasks with no open window the
	// index keeps whole; older ones go to the archive. Zero or less means
	// DefaultArchiveAfter.
	ArchiveAfter int
}

// Open returns the store in dir. It writes nothing: the directory is created
// (mode 0700, parents too) by the first write, so a command that fails on bad
// input leaves no trace. A path that exists but is not a directory is an
// error.
func Open(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("state directory %s is not a directory (set RUNNER_STATE_DIR to a directory)", abs)
	}
	return &Store{
		dir:             abs,
		LockTimeout:     DefaultLockTimeout,
		Retention:       DefaultRetention,
		JournalMaxBytes: DefaultJournalMaxBytes,
		JournalKeep:     DefaultJournalKeep,
	}, nil
}

// ensureDir creates the state directory, mode 0700, if it is missing.
func (s *Store) ensureDir() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("create state directory %s: %w (set RUNNER_STATE_DIR to a writable directory)", s.dir, err)
	}
	return nil
}

// Dir returns the state directory.
func (s *Store) Dir() string { return s.dir }

// Path returns the path of state.json.
func (s *Store) Path() string { return filepath.Join(s.dir, StateFile) }

func (s *Store) path(name string) string { return filepath.Join(s.dir, name) }

// Read returns the current state without taking the lock. It never sees a
// half-written file: state.json is only ever replaced by a rename. A missing
// file is an empty state. A corrupt file is an error wrapping ErrCorrupt, a
// file from a newer runner one wrapping ErrNewerVersion.
func (s *Store) Read(ctx context.Context) (*State, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, _, err := s.load()
	return st, err
}

// Update changes the state under the exclusive lock: it waits for the lock
// (at most LockTimeout, then an error wrapping ErrBusy), reads state.json,
// calls fn, prunes finished tasks past the Retention and, if anything
// changed, writes the result atomically and durably. If fn returns an error
// (or panics), nothing it did is written and that error is returned (the
// panic goes on in the caller). fn must not do tmux or git work, nor call
// Update or Repair: the lock is held while it runs. Updates made at the same
// time by goroutines of one process are applied in one write (see
// updateQueues); fn sees the state as the updates before it left it.
func (s *Store) Update(ctx context.Context, fn func(*State) error) error {
	return s.combinedUpdate(ctx, fn)
}

// Prune removes now the finished tasks that ended more than olderThan ago,
// from the index and the archive, with their files, and returns their ids,
// sorted.
func (s *Store) Prune(ctx context.Context, olderThan time.Duration) ([]string, error) {
	var removed []string
	err := s.Update(ctx, func(st *State) error {
		st.pruneNow, st.pruneCutoff = true, time.Now().Add(-olderThan)
		st.onPruned = func(ids []string) { removed = ids }
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(removed)
	return removed, nil
}

// prune removes the terminal tasks of the index that ended before cutoff
// (none for a zero cutoff) and returns their ids.
func prune(st *State, cutoff time.Time) []string {
	if cutoff.IsZero() {
		return nil
	}
	var removed []string
	for id, t := range st.Tasks {
		if t.Status.IsTerminal() && !t.Ended.IsZero() && t.Ended.Before(cutoff) {
			delete(st.Tasks, id)
			removed = append(removed, id)
		}
	}
	sort.Strings(removed)
	return removed
}

// load reads state.json and the records of the tasks in it. It also
// returns the file's content (nil if there is no file), so write can tell
// whether anything changed. It takes no lock: a writer that supersedes a
// record between the reads of the index and of the record makes it read
// the index again.
func (s *Store) load() (*State, []byte, error) {
	p := s.Path()
	for attempt := 0; ; attempt++ {
		raw, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			st := New()
			st.dir = s.dir
			return st, nil, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read state file %s: %w", p, err)
		}
		st, err := s.parse(p, raw)
		var gone *recordGoneError
		if errors.As(err, &gone) && attempt < 50 {
			if now, rerr := os.ReadFile(p); rerr == nil && !bytes.Equal(now, raw) {
				continue // a writer moved on: read its index
			}
			if attempt < 3 {
				time.Sleep(time.Millisecond)
				continue
			}
		}
		if err != nil {
			return nil, nil, err
		}
		return st, raw, nil
	}
}

// recordGoneError says the index names a record file that is not there.
type recordGoneError struct {
	path string
	err  error
}

func (e *recordGoneError) Error() string {
	return fmt.Sprintf("the index names the record %s, which cannot be read: %v (run 'runner state repair')", e.path, e.err)
}

func (e *recordGoneError) Unwrap() error { return ErrCorrupt }

// parse decodes a state file and the records it names, checking its
// version. A version 1 or 2 file (whole tasks inline) is read as it is;
// the first write converts it.
func (s *Store) parse(path string, raw []byte) (*State, error) {
	var probe struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		if len(raw) == 0 {
			err = errors.New("the file is empty")
		}
		return nil, &CorruptError{Path: path, Err: err}
	}
	switch {
	case probe.Version > Version:
		return nil, &NewerVersionError{Path: path, Version: probe.Version}
	case probe.Version < 1:
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("no valid schema version (got %d)", probe.Version)}
	case probe.Version < Version:
		return parseLegacy(s.dir, path, raw)
	}
	var ix indexFile
	if err := json.Unmarshal(raw, &ix); err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	st := &State{
		Version: ix.Version, Generation: ix.Generation, Updated: ix.Updated,
		Projects: ix.Projects, Tasks: make(map[string]*Task, len(ix.Tasks)), Messages: ix.Messages,
		dir: s.dir, arch: ix.Archive, retired: ix.Retired, base: make(map[string]baseOf, len(ix.Tasks)),
	}
	for id, e := range ix.Tasks {
		if e == nil || e.ID != id || !safeName(id) {
			return nil, &CorruptError{Path: path, Err: fmt.Errorf("bad task entry %q", id)}
		}
	}
	recs, err := s.readRecords(ix.Tasks)
	if err != nil {
		return nil, err
	}
	for id, e := range ix.Tasks {
		rec := recs[id]
		t := rec.clone()
		e.applyHot(t)
		st.Tasks[id] = t
		st.base[id] = baseOf{rec: rec, gen: e.Record}
	}
	st.normalize()
	return st, nil
}

// readRecords reads the records the entries name, those not cached in
// parallel (two readers: the machine has few cores, and most reads are
// cached).
func (s *Store) readRecords(es map[string]*entry) (map[string]*Task, error) {
	out := make(map[string]*Task, len(es))
	var missing []*entry
	for id, e := range es {
		if t := records.get(recordPath(s.dir, id, e.Record)); t != nil {
			out[id] = t
		} else {
			missing = append(missing, e)
		}
	}
	got := make([]*Task, len(missing))
	errs := make([]error, len(missing))
	var wg sync.WaitGroup
	const readers = 2
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := r; i < len(missing); i += readers {
				got[i], errs[i] = readRecord(s.dir, missing[i].ID, missing[i].Record)
			}
		}()
	}
	wg.Wait()
	for i, e := range missing {
		if errors.Is(errs[i], fs.ErrNotExist) {
			return nil, &recordGoneError{path: recordPath(s.dir, e.ID, e.Record), err: errs[i]}
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[e.ID] = got[i]
	}
	return out, nil
}

// index returns the index file of st, each task's entry naming its record
// generation in st.base.
func (st *State) index() *indexFile {
	ix := &indexFile{
		Version: Version, Generation: st.Generation, Updated: st.Updated,
		Projects: st.Projects, Tasks: make(map[string]*entry, len(st.Tasks)),
		Messages: st.Messages, Archive: st.arch, Retired: st.retired,
	}
	for id, t := range st.Tasks {
		ix.Tasks[id] = toEntry(t, st.base[id].gen)
	}
	return ix
}

// writeResult is what a write did, for the caller to finish once the
// index is durable.
type writeResult struct {
	renamed bool
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
	var changed []*Task
	for id, t := range st.Tasks {
		if b, ok := st.base[id]; !ok || !sameBulk(b.rec, t) {
			changed = append(changed, t)
		}
	}
	if len(changed) == 0 && len(st.promoted) == 0 && !st.pruneNow && raw != nil && st.Version == Version {
		b, err := json.Marshal(st.index())
		if err != nil {
			return res, fmt.Errorf("encode state: %w", err)
		}
		if bytes.Equal(append(b, '\n'), raw) {
			return res, nil
		}
	}
	gen := st.Generation + 1
	res.remove = append(res.remove, st.retired...) // what the last write retired
	retired, err := s.writeRecords(st, changed, gen)
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
	st.Version, st.Generation, st.Updated, st.retired = Version, gen, now, retired
	st.pruneNow, st.legacy = false, 0
	b, err := json.Marshal(st.index())
	if err != nil {
		return res, fmt.Errorf("encode state: %w", err)
	}
	if err := s.writeFile(append(b, '\n')); err != nil {
		return res, err
	}
	res.renamed = true
	res.remove = append(res.remove, retired...)
	return res, nil
}

// writeRecords writes the records of generation gen of the changed tasks
// and makes them durable (each fsynced and the directory, or one syncfs
// for many), and returns the records they supersede.
func (s *Store) writeRecords(st *State, changed []*Task, gen uint64) (retired []string, err error) {
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
		if _, err := writeRecord(s.dir, t, gen, many); err != nil {
			return nil, err
		}
		st.base[t.ID] = baseOf{rec: records.get(recordPath(s.dir, t.ID, gen)), gen: gen}
	}
	tasksDir := filepath.Join(s.dir, "tasks")
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

// writeFile replaces state.json with data: temp file, fsync, keep the
// previous generation, rename. The caller fsyncs the directory.
func (s *Store) writeFile(data []byte) (err error) {
	cur, tmp := s.Path(), s.path(tmpFile)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
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
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := s.keepPrevious(); err != nil {
		return err
	}
	return os.Rename(tmp, cur)
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

// lock takes the exclusive flock on state.lock, waiting at most LockTimeout
// (or until ctx ends). The returned function releases it. In one process
// only the leader of a batch of updates takes it (see updateQueues), so at
// most one thread per process waits in flock(2).
func (s *Store) lock(ctx context.Context) (func(), error) {
	if err := s.ensureDir(); err != nil {
		return nil, err
	}
	timeout := s.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	return flockFile(ctx, s.path(LockFile), false, timeout)
}

// flockFile opens path (creating it 0600) and takes an flock on it
// (gofrs/flock), exclusive or shared. It first tries without blocking; if the lock is held it blocks
// in a goroutine, so waiters are woken by the kernel as soon as the lock is
// free instead of polling. If the wait is abandoned (timeout or ctx), the
// goroutine releases the lock as soon as it gets it.
func flockFile(ctx context.Context, path string, shared bool, timeout time.Duration) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("wait for lock %s: %w", path, err)
	}
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	try, lock := fl.TryLock, fl.Lock
	if shared {
		try, lock = fl.TryRLock, fl.RLock
	}
	release := func() { _ = fl.Unlock() } // Unlock also closes the file
	ok, err := try()
	if err != nil {
		_ = fl.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if ok {
		return release, nil
	}
	done := make(chan error) // unbuffered: a send succeeds only if someone still waits
	abandon := make(chan struct{})
	go func() {
		err := lock()
		select {
		case done <- err:
		case <-abandon:
			release()
		}
	}()
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			_ = fl.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return release, nil
	case <-timer.C:
		close(abandon)
		return nil, &BusyError{Lock: path, Timeout: timeout}
	case <-ctx.Done():
		close(abandon)
		return nil, fmt.Errorf("wait for lock %s: %w", path, ctx.Err())
	}
}
