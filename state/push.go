// The push outbox (config notify_push): what a supervisor queues when a
// task needs its user, and one sender process (runner push-send) drains.
//
//	push/outbox/<h>.json   a push waiting to go (Push), h the hash of its
//	                       key; written to a temporary file, fsynced, then
//	                       linked to its name, so a second push of the
//	                       same key finds it there and is not queued
//	push/sent/<h>          a push that went (or gave up): its key stays
//	                       taken for PushKeep
//	push/sender.lock       the flock the one sender holds
//	push/status.json       each target's last success and last failure
//	                       (PushStatus), for runner doctor
//	push/sender.log        the sender's own output
//
// Queueing takes no lock and touches no other file: it is safe on a
// supervisor's way to its next wait. The sender is the only writer of a
// queued push after it is queued, of status.json and of sent/.

package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/atomicfile"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/filelock"
)

// PushKeep is how long a sent push's key stays taken (a redraw of the
// same dialog a day later pushes nothing more).
const PushKeep = 7 * 24 * time.Hour

// PushEvent is what a push says: the body of a webhook's POST (and what
// an ntfy message is made of).
type PushEvent struct {
	Task     string    `json:"task"`
	Status   string    `json:"status"`
	Time     time.Time `json:"time"`
	Project  string    `json:"project,omitempty"`
	Agent    string    `json:"agent,omitempty"`
	Title    string    `json:"title,omitempty"`
	Question string    `json:"question,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	// URL is the task's page on runner serve (config serve_url).
	URL    string      `json:"url,omitempty"`
	Dialog *PushDialog `json:"dialog,omitempty"`
}

// PushDialog is the dialog a needs_input push is about, as read off the
// screen: its digest (what an answer is bound to) and its options.
type PushDialog struct {
	Digest   string       `json:"digest,omitempty"`
	Question string       `json:"question,omitempty"`
	Options  []PushOption `json:"options,omitempty"`
}

// PushOption is one option of a dialog.
type PushOption struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

// Push is one queued push: its event and how each target fared.
type Push struct {
	// Key names the push: one key, one push (see QueuePush).
	Key    string    `json:"key"`
	Queued time.Time `json:"queued"`
	Event  PushEvent `json:"event"`
	// Tries maps a target (its id) to how it went so far.
	Tries map[string]*PushTry `json:"tries,omitempty"`
}

// PushTry is how a push went to one target.
type PushTry struct {
	Attempts int       `json:"attempts"`
	Next     time.Time `json:"next,omitzero"`
	Sent     time.Time `json:"sent,omitzero"`
	// GaveUp is set once the attempts are spent.
	GaveUp bool   `json:"gave_up,omitempty"`
	Error  string `json:"error,omitempty"`
}

// PushTargetStatus is a target's last success and last failure.
type PushTargetStatus struct {
	LastSent    time.Time `json:"last_sent,omitzero"`
	LastFailure time.Time `json:"last_failure,omitzero"`
	Error       string    `json:"error,omitempty"`
	Task        string    `json:"task,omitempty"`
}

func (s *Store) pushPath(parts ...string) string {
	return filepath.Join(append([]string{s.dir, "push"}, parts...)...)
}

func pushName(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:12])
}

// PushLog is the file the sender's output goes to.
func (s *Store) PushLog() string { return s.pushPath("sender.log") }

// QueuePush queues p unless a push of its key is queued or was sent within
// PushKeep; queued says which. The push is durable when it returns.
func (s *Store) QueuePush(p *Push) (queued bool, err error) {
	if err := s.ensureDir(); err != nil {
		return false, err
	}
	name := pushName(p.Key)
	if _, err := os.Lstat(s.pushPath("sent", name)); err == nil {
		return false, nil
	}
	dir := s.pushPath("outbox")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	b, err := json.Marshal(p)
	if err != nil {
		return false, fmt.Errorf("encode push: %w", err)
	}
	f, err := os.CreateTemp(dir, ".new-*")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("queue push: %w", err)
	}
	if err := os.Link(tmp, filepath.Join(dir, name+".json")); errors.Is(err, fs.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("queue push: %w", err)
	}
	return true, syncDir(dir)
}

// syncDir fsyncs a directory, making the names made in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// PushOutbox returns the queued pushes, oldest first. One that does not
// parse is dropped (said in the error, the others returned).
func (s *Store) PushOutbox() ([]*Push, error) {
	dir := s.pushPath("outbox")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Push
	var bad []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".json") {
			continue
		}
		b, err := readFile(filepath.Join(dir, n))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		var p Push
		if err == nil {
			err = json.Unmarshal(b, &p)
		}
		if err != nil {
			bad = append(bad, n)
			_ = os.Remove(filepath.Join(dir, n))
			continue
		}
		out = append(out, &p)
	}
	slices.SortStableFunc(out, func(a, b *Push) int { return a.Queued.Compare(b.Queued) })
	if len(bad) > 0 {
		return out, fmt.Errorf("push outbox: dropped %d file(s) that do not parse: %s", len(bad), strings.Join(bad, ", "))
	}
	return out, nil
}

// SavePush writes a queued push back (how its targets fared).
func (s *Store) SavePush(p *Push) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode push: %w", err)
	}
	return atomicfile.Write(s.pushPath("outbox", pushName(p.Key)+".json"), b, 0o600, false)
}

// DonePush takes a push out of the outbox, its key kept taken (sent/), and
// forgets the keys sent more than PushKeep ago.
func (s *Store) DonePush(p *Push) error {
	name := pushName(p.Key)
	sent := s.pushPath("sent")
	if err := os.MkdirAll(sent, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(sent, name), nil, 0o600); err != nil {
		return err
	}
	if err := os.Remove(s.pushPath("outbox", name+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if ents, err := os.ReadDir(sent); err == nil {
		cutoff := clock.Now().Add(-PushKeep)
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && clock.Outside(fi.ModTime()).Before(cutoff) {
				_ = os.Remove(filepath.Join(sent, e.Name()))
			}
		}
	}
	return nil
}

// PushSender takes the sender's flock if no sender holds it: ok false
// means one runs.
func (s *Store) PushSender() (release func(), ok bool) {
	if err := os.MkdirAll(s.pushPath(), 0o700); err != nil {
		return nil, false
	}
	return filelock.TryLock(s.pushPath("sender.lock"))
}

// PushStatus reads each target's last success and failure (none yet: an
// empty map).
func (s *Store) PushStatus() (map[string]*PushTargetStatus, error) {
	out := map[string]*PushTargetStatus{}
	b, err := readFile(s.pushPath("status.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return map[string]*PushTargetStatus{}, fmt.Errorf("%s: %w", s.pushPath("status.json"), err)
	}
	return out, nil
}

// SetPushStatus writes the targets' status (the sender's, under its lock).
func (s *Store) SetPushStatus(st map[string]*PushTargetStatus) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.pushPath("status.json"), append(b, '\n'), 0o600, false)
}

// StreamPush puts ev (Type EventPush) on the event stream: a push sent or
// given up, for runner events.
func (s *Store) StreamPush(ctx context.Context, ev StreamEvent) error {
	ev.Type = EventPush
	return s.Update(ctx, func(st *State) error {
		st.emitted = append(st.emitted, ev)
		return nil
	})
}
