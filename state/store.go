package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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

// Prune removes now the finished tasks that ended more than olderThan ago and
// returns their ids, sorted by creation time.
func (s *Store) Prune(ctx context.Context, olderThan time.Duration) ([]string, error) {
	var removed []string
	err := s.Update(ctx, func(st *State) error {
		cutoff := time.Now().Add(-olderThan)
		removed = prune(st, cutoff)
		pruneMessages(st, cutoff)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.removeTaskFiles(removed)
	return removed, nil
}

// prune removes terminal tasks that ended before cutoff and returns their
// ids, oldest first.
func prune(st *State, cutoff time.Time) []string {
	var removed []*Task
	for id, t := range st.Tasks {
		if t.Status.IsTerminal() && !t.Ended.IsZero() && t.Ended.Before(cutoff) {
			delete(st.Tasks, id)
			removed = append(removed, t)
		}
	}
	if len(removed) == 0 {
		return nil
	}
	sort.Slice(removed, func(i, j int) bool {
		if !removed[i].Created.Equal(removed[j].Created) {
			return removed[i].Created.Before(removed[j].Created)
		}
		return removed[i].ID < removed[j].ID
	})
	ids := make([]string, len(removed))
	for i, t := range removed {
		ids[i] = t.ID
	}
	return ids
}

// load reads and parses state.json. It also returns the file's content
// ("" if there is no file), so write can tell whether anything changed.
func (s *Store) load() (*State, string, error) {
	p := s.Path()
	raw, err := readString(p)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read state file %s: %w", p, err)
	}
	st, err := parse(p, raw)
	if err != nil {
		return nil, "", err
	}
	return st, raw, nil
}

// readString reads a whole file into a string without the copy a
// conversion from []byte would make: the decoder keeps substrings of it.
func readString(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var b strings.Builder
	if fi, err := f.Stat(); err == nil {
		b.Grow(int(fi.Size()) + 512)
	}
	if _, err := io.Copy(&b, f); err != nil {
		return "", err
	}
	return b.String(), nil
}

// parse decodes a state file, checking its version. The fast decoder reads
// the files runner writes; anything it does not understand is decoded by
// encoding/json, whose answer (and error) is the reference.
func parse(path string, raw string) (*State, error) {
	st, err := decodeFast(raw)
	if err != nil {
		st = new(State)
		err = json.Unmarshal([]byte(raw), st)
	}
	if err != nil {
		// A newer runner may have changed the shape: say so rather than
		// "corrupt" when the version says it is newer.
		var probe struct {
			Version int `json:"version"`
		}
		if json.Unmarshal([]byte(raw), &probe) == nil && probe.Version > Version {
			return nil, &NewerVersionError{Path: path, Version: probe.Version}
		}
		if len(raw) == 0 {
			err = errors.New("the file is empty")
		}
		return nil, &CorruptError{Path: path, Err: err}
	}
	switch {
	case st.Version > Version:
		return nil, &NewerVersionError{Path: path, Version: st.Version}
	case st.Version < 1:
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("no valid schema version (got %d)", st.Version)}
	}
	st.normalize()
	return st, nil
}

// encode renders st as the file's bytes: a header with the version,
// generation and time, then the body. The body is returned on its own too so
// write can compare it with the file on disk without encoding twice.
func encode(st *State, sizeHint int) (header func(gen uint64, updated time.Time) []byte, body []byte, err error) {
	header = func(gen uint64, updated time.Time) []byte {
		b := make([]byte, 0, 96)
		b = append(b, `{"version":`...)
		b = strconv.AppendInt(b, int64(st.Version), 10)
		b = append(b, `,"generation":`...)
		b = strconv.AppendUint(b, gen, 10)
		if !updated.IsZero() {
			b = append(b, `,"updated":"`...)
			b = updated.AppendFormat(b, time.RFC3339Nano)
			b = append(b, '"')
		}
		return append(b, ',')
	}
	body, err = encodeFast(make([]byte, 0, sizeHint+4096), st)
	if err != nil {
		// json.Marshal fails on the same values; let it say why.
		full, jerr := json.Marshal(st)
		if jerr == nil {
			// Not expected: the codec tests hold the two to the same
			// output. Use the reference, without its header.
			h := header(st.Generation, st.Updated)
			if bytes.HasPrefix(full, h) {
				return header, append([]byte{'{'}, full[len(h):]...), nil
			}
			jerr = fmt.Errorf("%v (and json.Marshal wrote an unexpected header)", err)
		}
		return nil, nil, fmt.Errorf("encode state: %w", jerr)
	}
	return header, body, nil
}

// write renames st into place unless it is unchanged from raw (the bytes
// load read) and reports whether it did. The caller must then call syncDir
// to make the rename durable. Called with the lock held.
func (s *Store) write(st *State, raw string, now time.Time) (bool, error) {
	st.Version = Version
	header, body, err := encode(st, len(raw))
	if err != nil {
		return false, err
	}
	if raw != "" && raw == string(joinFile(header(st.Generation, st.Updated), body)) {
		return false, nil
	}
	st.Generation++
	st.Updated = now
	if err := s.writeFile(joinFile(header(st.Generation, st.Updated), body)); err != nil {
		return false, err
	}
	return true, nil
}

func joinFile(header, body []byte) []byte {
	b := make([]byte, 0, len(header)+len(body))
	b = append(b, header...)
	b = append(b, body[1:]...) // body starts with '{'
	return append(b, '\n')
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
