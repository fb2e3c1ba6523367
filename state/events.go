// The event stream: one JSON line per change of the state — a task's
// status with its reason, the end of a turn, a message's step, an overlap —
// appended by the write that makes the change, under the state lock, so
// the lines are in the order of the changes and each has the next cursor.

package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
)

// EventsFile is the event stream in the state directory; rotated files are
// EventsFile.1 (the newest) to EventsFile.<EventsKeep>.
const EventsFile = "events.jsonl"

// EventsSchema is the version of the event lines' schema (their "v").
const EventsSchema = 1

// Rotation of the event stream: past DefaultEventsMaxBytes (the Store's
// EventsMaxBytes) the file becomes EventsFile.1, and EventsKeep rotated
// files are kept.
const (
	DefaultEventsMaxBytes = 16 << 20
	EventsKeep            = 4
)

// The event types.
const (
	EventStatus  = "status"  // a task's status changed (Status, Reason)
	EventTurn    = "turn"    // a task's turn ended (Answer: its first line)
	EventMessage = "message" // a message was posted or moved on (Message, From, To, Status)
	EventOverlap = "overlap" // a task's files met another's, or no longer do (With, Files)
	EventCheck   = "check"   // a group's check ran in a candidate's worktree (Status passed or failed, Reason)
	EventPush    = "push"    // a push (notify_push) went (Status sent) or gave up (Status failed, Reason), To its target
	EventAnswer  = "answer"  // an answer to a task's dialog was pressed, failed part way or refused (Status; Option, Label, Digest, Op, By; Reason)
)

// StreamEvent is one line of the event stream.
type StreamEvent struct {
	Cursor  uint64    `json:"cursor"`
	V       int       `json:"v"`
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Task    string    `json:"task,omitempty"`
	Project string    `json:"project,omitempty"`
	// Host is the host the task runs on ("" for this machine), Pool the
	// pool of hosts it was dispatched to (Host is "" until it is placed).
	Host string `json:"host,omitempty"`
	Pool string `json:"pool,omitempty"`
	// Group is the group the task is a candidate of (dispatch --agents).
	Group  string `json:"group,omitempty"`
	Status string `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Answer is the first line of a turn's answer (or its summary), and
	// Spend what the turn used (absent in turns from before spend was
	// kept).
	Answer string `json:"answer,omitempty"`
	Spend  *Spend `json:"spend,omitempty"`
	// Message, From and To name a message; Status is its status.
	Message string `json:"message,omitempty"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	// With and Files: the other task of an overlap and the files both
	// changed (none: the overlap ended).
	With  string   `json:"with,omitempty"`
	Files []string `json:"files,omitempty"`
	// Option, Label, Digest, Op and By are an answer's receipt: the
	// option's key and label, the digest of the dialog it answered, its
	// operation id and who gave it; Status is its result (pressed, failed
	// or refused) and Reason why it was refused.
	Option string `json:"option,omitempty"`
	Label  string `json:"label,omitempty"`
	Digest string `json:"digest,omitempty"`
	Op     string `json:"op,omitempty"`
	By     string `json:"by,omitempty"`
}

// streamEvents returns the events of the changes st makes to what was
// loaded: each task's new history entries and turns, its overlaps that
// changed, each message's new status.
func (st *State) streamEvents() []StreamEvent {
	var out []StreamEvent
	ids := make([]string, 0, len(st.Tasks))
	for id := range st.Tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		t := st.Tasks[id]
		var old *Task
		if b, ok := st.base[id]; ok {
			old = b.rec
		}
		out = append(out, taskEvents(old, t)...)
	}
	for _, m := range st.MessageList() {
		if prev, ok := st.msgBase[m.ID]; ok && prev == m.Status {
			continue
		}
		out = append(out, StreamEvent{Time: messageTime(m), Type: EventMessage, Task: m.To, Message: m.ID, From: m.From, To: m.To,
			Status: string(m.Status), Reason: m.Reason})
	}
	return append(out, st.emitted...)
}

func messageTime(m *Message) time.Time {
	if !m.Delivered.IsZero() {
		return m.Delivered
	}
	return m.Created
}

// taskEvents are the events of t's changes since old (nil: a new task).
func taskEvents(old, t *Task) []StreamEvent {
	var out []StreamEvent
	var oldHist []StatusChange
	var oldTurns []Turn
	var oldOver []Overlap
	var oldCheck *CheckResult
	if old != nil {
		oldHist, oldTurns, oldOver, oldCheck = old.History, old.Turns, old.Overlaps, old.Check
	}
	if c := t.Check; c != nil && !sameCheck(c, oldCheck) {
		st := "failed"
		if c.Passed() {
			st = "passed"
		}
		out = append(out, StreamEvent{Time: c.Ran, Type: EventCheck, Task: t.ID, Project: t.Project, Host: t.Tmux.Host, Pool: t.Tmux.Pool, Group: t.Group, Status: st,
			Reason: fmt.Sprintf("%s: exit %d", c.Command, c.Exit)})
	}
	if len(t.History) > len(oldHist) {
		for _, h := range t.History[len(oldHist):] {
			out = append(out, StreamEvent{Time: h.Time, Type: EventStatus, Task: t.ID, Project: t.Project, Host: t.Tmux.Host, Pool: t.Tmux.Pool, Group: t.Group, Status: string(h.Status), Reason: h.Reason})
		}
	}
	var since time.Time
	if len(oldTurns) > 0 {
		since = oldTurns[len(oldTurns)-1].Time
	}
	for _, tr := range t.Turns {
		if len(oldTurns) > 0 && !tr.Time.After(since) {
			continue
		}
		line := textutil.FirstLine(tr.Answer)
		if line == "" {
			line = tr.Summary
		}
		ev := StreamEvent{Time: tr.Time, Type: EventTurn, Task: t.ID, Project: t.Project, Host: t.Tmux.Host, Pool: t.Tmux.Pool, Group: t.Group, Answer: line}
		if !tr.Spend.IsZero() {
			sp := tr.Spend
			ev.Spend = &sp
		}
		out = append(out, ev)
	}
	for _, o := range t.Overlaps {
		var was []string
		for _, p := range oldOver {
			if p.Task == o.Task {
				was = p.Files
			}
		}
		if !slices.Equal(was, o.Files) {
			out = append(out, StreamEvent{Time: o.Since, Type: EventOverlap, Task: t.ID, Project: t.Project, Host: t.Tmux.Host, Pool: t.Tmux.Pool, With: o.Task, Files: o.Files})
		}
	}
	for _, p := range oldOver {
		if t.OverlapWith(p.Task) == nil {
			out = append(out, StreamEvent{Time: clock.Now().UTC(), Type: EventOverlap, Task: t.ID, Project: t.Project, Host: t.Tmux.Host, Pool: t.Tmux.Pool, With: p.Task, Files: []string{}})
		}
	}
	return out
}

// numberEvents gives evs the cursors after st.EventSeq (which the index
// then records).
func (st *State) numberEvents(evs []StreamEvent) {
	for i := range evs {
		st.EventSeq++
		evs[i].Cursor, evs[i].V = st.EventSeq, EventsSchema
		if evs[i].Time.IsZero() {
			evs[i].Time = clock.Now().UTC()
		}
	}
}

// appendEvents appends evs to the event stream, rotating it when it is
// full. Called with the state lock held, once the index that names the
// changes (and the last cursor) is written.
func (s *Store) appendEvents(evs []StreamEvent) error {
	if len(evs) == 0 {
		return nil
	}
	var b strings.Builder
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("encode event: %w", err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	p := s.path(EventsFile)
	if fi, err := os.Stat(p); err == nil && s.EventsMaxBytes > 0 && fi.Size()+int64(b.Len()) > s.EventsMaxBytes {
		for k := EventsKeep - 1; k >= 0; k-- {
			if err := os.Rename(s.EventsPath(k), s.EventsPath(k+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("rotate the event stream: %w", err)
			}
		}
	}
	f, err := openFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open the event stream: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("append to the event stream %s: %w", p, err)
	}
	return f.Close()
}

// EventsPath is the event stream's file k: EventsFile for 0, the rotated
// EventsFile.k otherwise.
func (s *Store) EventsPath(k int) string {
	if k == 0 {
		return s.path(EventsFile)
	}
	return s.path(EventsFile + "." + strconv.Itoa(k))
}

// ReadEvents calls fn with each event line (its newline included) whose
// cursor is after after, oldest first, from the rotated files still kept
// and the current one; fn returning false stops. first is the cursor of
// the oldest event kept (0 when there is none): a reader whose cursor is
// older lost what lies in between.
func (s *Store) ReadEvents(after uint64, fn func(line []byte) bool) (first uint64, err error) {
	for k := EventsKeep; k >= 0; k-- {
		f, err := openRead(s.EventsPath(k))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return first, fmt.Errorf("read the event stream: %w", err)
		}
		_, stop, err := ScanEventLines(f, func(line []byte) bool {
			c, ok := EventCursor(line)
			if !ok {
				return true
			}
			if first == 0 {
				first = c
			}
			return c <= after || fn(line)
		})
		f.Close()
		if err != nil || stop {
			return first, err
		}
	}
	return first, nil
}

// ScanEventLines reads event lines from r until its end (a last line
// without its newline, being written, is left for the next read), calling
// fn with each; it returns the bytes consumed and whether fn stopped.
func ScanEventLines(r io.Reader, fn func(line []byte) bool) (n int64, stopped bool, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return n, false, nil
		}
		if err != nil {
			return n, false, err
		}
		n += int64(len(line))
		if !fn(line) {
			return n, true, nil
		}
	}
}

// EventCursor reads the cursor of an event line, which starts with it
// ({"cursor":N,…}), without decoding the rest; false for a line that is
// no event.
func EventCursor(line []byte) (uint64, bool) {
	const head = `{"cursor":`
	if !bytes.HasPrefix(line, []byte(head)) {
		return 0, false
	}
	var c uint64
	i := len(head)
	for ; i < len(line) && line[i] >= '0' && line[i] <= '9'; i++ {
		c = c*10 + uint64(line[i]-'0')
	}
	return c, i > len(head) && i < len(line) && line[i] == ','
}

// ParseEvent decodes an event line.
func ParseEvent(line []byte) (StreamEvent, error) {
	var ev StreamEvent
	err := json.Unmarshal(line, &ev)
	return ev, err
}

// lastEventCursor is the cursor of the event stream's last line (0 when
// there is none), for an index rebuilt without it.
func (s *Store) lastEventCursor() uint64 {
	var last uint64
	for k := 0; k <= EventsKeep && last == 0; k++ {
		f, err := openRead(s.EventsPath(k))
		if err != nil {
			continue
		}
		_, _, _ = ScanEventLines(f, func(line []byte) bool {
			if c, ok := EventCursor(line); ok && c > last {
				last = c
			}
			return true
		})
		f.Close()
	}
	return last
}
