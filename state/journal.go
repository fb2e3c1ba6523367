package state

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

const journalLock = "journal.lock"

// Event kinds written by runner. Repair replays the ones that carry a
// record.
const (
	EventProjectAdded   = "project.added"   // ProjectRecord set
	EventProjectRemoved = "project.removed" // Project set
	EventTask           = "task"            // TaskRecord set: the task as it is now
	EventPrune          = "prune"           // Message lists what was removed
)

// Event is one line of the journal, the append-only audit trail.
type Event struct {
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	PID     int       `json:"pid,omitempty"`
	Project string    `json:"project,omitempty"`
	Task    string    `json:"task,omitempty"`
	Status  Status    `json:"status,omitempty"`
	Message string    `json:"message,omitempty"`

	// Records, for Repair to rebuild the state from the journal.
	ProjectRecord *Project `json:"project_record,omitempty"`
	TaskRecord    *Task    `json:"task_record,omitempty"`
}

// Journal appends ev to journal.jsonl, filling Time and PID when unset, and
// rotates the journal once it passes JournalMaxBytes. The journal has its
// own lock, so it may be called inside an Update function too. Appends are
// not fsynced: state.json is the durable record, the journal the audit trail.
func (s *Store) Journal(ctx context.Context, ev Event) error {
	if ev.Time.IsZero() {
		ev.Time = clock.Now().UTC()
	}
	if ev.PID == 0 {
		ev.PID = os.Getpid()
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode journal event %q: %w", ev.Kind, err)
	}
	line = append(line, '\n')
	if err := s.ensureDir(); err != nil {
		return err
	}
	unlock, err := flockFile(ctx, s.path(journalLock), false, s.LockTimeout)
	if err != nil {
		return err
	}
	defer unlock()
	p := s.path(JournalFile)
	if fi, err := os.Stat(p); err == nil && s.JournalMaxBytes > 0 && fi.Size()+int64(len(line)) > s.JournalMaxBytes {
		if err := s.rotateJournal(); err != nil {
			return err
		}
	}
	f, err := openFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open journal %s: %w", p, err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("append to journal %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("append to journal %s: %w", p, err)
	}
	return nil
}

// rotateJournal shifts journal.jsonl.(k) to .(k+1), dropping the oldest, and
// the current journal to .1. Called with the journal lock held.
func (s *Store) rotateJournal() error {
	keep := max(s.JournalKeep, 1)
	os.Remove(s.journalPath(keep))
	for k := keep - 1; k >= 0; k-- {
		if err := os.Rename(s.journalPath(k), s.journalPath(k+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rotate journal: %w", err)
		}
	}
	return nil
}

// journalPath returns journal.jsonl for k == 0, journal.jsonl.k otherwise.
func (s *Store) journalPath(k int) string {
	if k == 0 {
		return s.path(JournalFile)
	}
	return s.path(JournalFile + "." + strconv.Itoa(k))
}

// ReadJournal returns the journal's events, oldest first, including the
// rotated files still kept. Lines that do not parse (a write cut short by a
// full disk, say) are skipped and counted in skipped.
func (s *Store) ReadJournal(ctx context.Context) (events []Event, skipped int, err error) {
	if _, err := os.Stat(s.dir); errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	unlock, err := flockFile(ctx, s.path(journalLock), true, s.LockTimeout)
	if err != nil {
		return nil, 0, err
	}
	defer unlock()
	for k := max(s.JournalKeep, 1); k >= 0; k-- {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		f, err := openRead(s.journalPath(k))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("read journal: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var ev Event
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				skipped++
				continue
			}
			events = append(events, ev)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, 0, fmt.Errorf("read journal %s: %w", s.journalPath(k), err)
		}
	}
	return events, skipped, nil
}
