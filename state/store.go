package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/clock"
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
	// failing with ErrBusy (or, with BusyWait, before saying they wait).
	LockTimeout time.Duration
	// BusyWait is how much longer than LockTimeout an update waits for a
	// lock held by other runners before failing with ErrBusy: a command
	// with a timeout of its own (a dispatch) waits its turn in a burst
	// rather than fail on plain contention. Zero: not at all. The wait
	// blocks in the kernel (flock), so many waiters cost nothing.
	BusyWait time.Duration
	// OnBusy, if set, is called once per store when a wait for the lock
	// goes past LockTimeout and BusyWait makes it go on (the command says
	// why it waits), with the error it would have failed with.
	OnBusy func(error)
	// Retention is how long finished tasks are kept: every Update prunes
	// terminal tasks that ended longer ago than this. Zero or less disables
	// pruning during updates.
	Retention time.Duration
	// JournalMaxBytes is the size past which the journal is rotated;
	// JournalKeep is how many rotated files (journal.jsonl.1 …) are kept.
	JournalMaxBytes int64
	JournalKeep     int
	// EventsMaxBytes is the size past which the event stream is rotated.
	EventsMaxBytes int64
	// ArchiveAfter is how many finished tasks with no open window the
	// index keeps whole; older ones go to the archive. Zero or less means
	// DefaultArchiveAfter.
	ArchiveAfter int
	// Now is the store's clock: the time an Update prunes against and
	// stamps the index with. Nil means time.Now. Tests set it to read
	// fixtures with fixed dates as of those dates.
	Now func() time.Time

	// PortBusy reports whether a TCP port of this machine is in use (a
	// listener holds it): the probe a new task's range of ports passes
	// when another process hands the task to this one (CreateTask). Nil:
	// such a task is left to its own process.
	PortBusy func(port int) bool

	known    knownTasks // see UpdateTask
	busyOnce sync.Once  // OnBusy's one call
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
	if err := checkDir(abs); err != nil {
		return nil, err
	}
	return &Store{
		dir:             abs,
		LockTimeout:     DefaultLockTimeout,
		Retention:       DefaultRetention,
		JournalMaxBytes: DefaultJournalMaxBytes,
		JournalKeep:     DefaultJournalKeep,
		EventsMaxBytes:  DefaultEventsMaxBytes,
	}, nil
}

// now reads the store's clock (Now, else time.Now) in UTC.
func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return clock.Now().UTC()
}

// ensureDir creates the state directory, mode 0700, if it is missing.
func (s *Store) ensureDir() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("create state directory %s: %w (set RUNNER_STATE_DIR to a writable directory)", s.dir, err)
	}
	return checkDir(s.dir)
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
		st.pruneNow, st.pruneCutoff = true, s.now().Add(-olderThan)
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
