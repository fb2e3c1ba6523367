package state

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/atomicfile"
	"github.com/runner-cli/runner/internal/filelock"
)

// The per-task files live in subdirectories of the state directory:
//
//	logs/<id>.log              the pane's transcript (tmux pipe-pane appends)
//	logs/<id>.supervisor.log   a detached supervisor's own log
//	events/<id>.jsonl          events from the agent's hook (runner hook)
//	events/panes-died          "PANE STATUS" lines from tmux's pane-died hook
//	locks/<project>.lock       the per-project lock of --exclusive
//	hooks/<id>/                settings files and plugins handed to agents for their hooks
//	doors/<id>/door.sock       a sandboxed task's one way to runner (package runner/door)
//	homes/<id>/home/           a sandboxed task's copy of its CLI's directories (sandbox_home "task")
//	tasks/<id>.txt             the whole text of a task longer than InlineTextMax
//	tasks/<id>.index           the git index runner looks at a task's changed files on

// TaskFileKind is a kind of per-task file (TaskFile): one of the File…
// constants, so a kind that does not exist does not compile.
type TaskFileKind int

// The kinds of per-task file (the layout above).
const (
	FileLog           TaskFileKind = iota // logs/<id>.log: the pane's transcript
	FileSupervisorLog                     // logs/<id>.supervisor.log
	FileEvents                            // events/<id>.jsonl: the hook events
	FileHookDir                           // hooks/<id>/
	FileDoorDir                           // doors/<id>/
	FileHomeDir                           // homes/<id>/
	FileText                              // tasks/<id>.txt: a long task's text
	FileChangesIndex                      // tasks/<id>.index
)

// taskFiles are each kind's folder and the suffix after the task's id.
var taskFiles = [...]struct{ dir, suffix string }{
	FileLog:           {"logs", ".log"},
	FileSupervisorLog: {"logs", ".supervisor.log"},
	FileEvents:        {"events", ".jsonl"},
	FileHookDir:       {"hooks", ""},
	FileDoorDir:       {"doors", ""},
	FileHomeDir:       {"homes", ""},
	FileText:          {"tasks", ".txt"},
	FileChangesIndex:  {"tasks", ".index"},
}

// String is the kind's name, e.g. "FileLog" for FileLog's.
func (k TaskFileKind) String() string {
	if k < 0 || int(k) >= len(taskFiles) {
		return "TaskFileKind(" + strconv.Itoa(int(k)) + ")"
	}
	return [...]string{"FileLog", "FileSupervisorLog", "FileEvents", "FileHookDir", "FileDoorDir", "FileHomeDir", "FileText", "FileChangesIndex"}[k]
}

// TaskFile returns the path of task id's file of the given kind. A kind
// outside the constants (only a conversion makes one) names a path under
// unknown/ in the state directory, none of runner's files.
func (s *Store) TaskFile(kind TaskFileKind, id string) string {
	if kind < 0 || int(kind) >= len(taskFiles) {
		return filepath.Join(s.dir, "unknown", kind.String(), id)
	}
	f := taskFiles[kind]
	return filepath.Join(s.dir, f.dir, id+f.suffix)
}

// PaneDiedFile is where tmux's pane-died hook appends "PANE STATUS" lines.
func (s *Store) PaneDiedFile() string { return filepath.Join(s.dir, "events", "panes-died") }

// PrepareTaskFiles creates the subdirectories (0700) and an empty transcript
// and events file (0600) for a task, so watchers can be set up before the
// first write.
func (s *Store) PrepareTaskFiles(id string) error {
	for _, sub := range []string{"logs", "events", "hooks", "locks"} {
		if err := os.MkdirAll(filepath.Join(s.dir, sub), 0o700); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Join(s.dir, sub), err)
		}
	}
	for _, p := range []string{s.TaskFile(FileLog, id), s.TaskFile(FileEvents, id), s.PaneDiedFile()} {
		f, err := openFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
		f.Close()
	}
	return nil
}

// TaskEvent is one event reported by an agent's hook for a task.
type TaskEvent struct {
	Time  time.Time       `json:"time"`
	Event string          `json:"event"` // e.g. "Stop"
	Data  json.RawMessage `json:"data,omitempty"`
}

// AppendTaskEvent appends ev to the task's events file. One write of one
// line with O_APPEND, so concurrent hooks never interleave.
func (s *Store) AppendTaskEvent(id string, ev TaskEvent) error {
	return AppendTaskEventIn(s.dir, id, ev)
}

// AppendTaskEventIn is AppendTaskEvent for the state directory dir, without
// opening the store (the hook command runs once per turn inside the
// agent's process tree and must stay cheap: no lock, no state file).
func AppendTaskEventIn(dir, id string, ev TaskEvent) error {
	if !ValidTaskID(id) {
		return fmt.Errorf("task id %q: want t_ and 8 lowercase letters or digits", id)
	}
	b, err := ev.appendLine(make([]byte, 0, 64+len(ev.Event)+len(ev.Data)+len(ev.Data)/8))
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "events", id+".jsonl")
	// Never through a link, nor into a FIFO or a device the agent put there.
	const flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	f, err := openFile(path, flags, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		f, err = openFile(path, flags, 0o600)
	}
	if err != nil {
		return fmt.Errorf("open events of %s: %w", id, err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("append event for %s: %w", id, err)
	}
	return nil
}

// appendLine appends ev's line to b: the bytes json.Marshal gives, and a
// newline, written out by hand (a hook is a process of its own per event:
// json.Marshal's reflection over the type, made anew in each, was half of
// what the hook did after its start, issue 51). TestEventLine holds it to
// json.Marshal.
func (ev TaskEvent) appendLine(b []byte) ([]byte, error) {
	t, err := ev.Time.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("json: error calling MarshalJSON for type time.Time: %w", err)
	}
	name, err := json.Marshal(ev.Event)
	if err != nil {
		return nil, err
	}
	b = append(append(append(append(b, `{"time":`...), t...), `,"event":`...), name...)
	if len(ev.Data) > 0 {
		// As json.Marshal gives a RawMessage: compact, HTML escaped.
		var data bytes.Buffer
		if err := json.Compact(&data, ev.Data); err != nil {
			return nil, fmt.Errorf("json: error calling MarshalJSON for type json.RawMessage: %w", err)
		}
		b = append(b, `,"data":`...)
		esc := bytes.NewBuffer(b)
		json.HTMLEscape(esc, data.Bytes())
		b = esc.Bytes()
	}
	return append(b, "}\n"...), nil
}

// ReadTaskEvents returns the task's hook events (a missing file is none;
// unparsable lines are skipped).
func (s *Store) ReadTaskEvents(id string) ([]TaskEvent, error) {
	f, err := openRead(s.TaskFile(FileEvents, id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var evs []TaskEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		var ev TaskEvent
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			evs = append(evs, ev)
		}
	}
	return evs, sc.Err()
}

// ProjectLock is a held per-project lock (runner dispatch --exclusive).
//
// Unlike the state and journal locks (filelock.Lock, see flockFile), it
// keeps its own open file (filelock.LockFile): a detached dispatch hands
// that file to its supervisor (File), so the lock passes to the child
// with no moment unheld.
type ProjectLock struct {
	f *os.File
}

// File returns the open lock file, to hand to a child process that keeps
// holding the lock (flock locks belong to the open file, which the child
// shares).
func (l *ProjectLock) File() *os.File { return l.f }

// HeldProjectLock is the project lock a parent process took and handed
// to this one as the open file f (see File): a detached supervisor's.
func HeldProjectLock(f *os.File) *ProjectLock { return &ProjectLock{f: f} }

// Unlock releases the lock: for every process that shares its open file
// too (flock(2) locks belong to the open file, so one that inherited it,
// by mistake or not, holds it no longer), and closes this process's
// descriptor. A second Unlock does nothing.
func (l *ProjectLock) Unlock() {
	if l != nil && l.f != nil {
		filelock.Unlock(l.f)
		l.f = nil
	}
}

// LockProject takes the per-project lock. Without wait, a lock held by
// someone else is an error wrapping ErrBusy at once; with wait, it waits
// until ctx ends, woken as soon as the lock is free (filelock.LockFile).
func (s *Store) LockProject(ctx context.Context, project string, wait bool) (*ProjectLock, error) {
	dir := filepath.Join(s.dir, "locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, project+".lock")
	f, err := openFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open project lock %s: %w", path, err)
	}
	switch err := filelock.LockFile(ctx, f, wait); {
	case err == nil:
		return &ProjectLock{f: f}, nil
	case errors.Is(err, filelock.ErrHeld):
		return nil, fmt.Errorf("project %q: another exclusive task holds %s: %w", project, path, ErrProjectLocked)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("wait for project lock %s: %w", path, ctx.Err())
	default:
		return nil, fmt.Errorf("lock project %s: %w", project, err)
	}
}

// InlineTextMax is the longest task text the state record holds whole. A
// longer text lives in its own file (Store.WriteTaskText), so that the state
// file, rewritten on every update, stays small; the record keeps its
// beginning (ClipText).
const InlineTextMax = 4096

// ClipText returns the beginning of a text longer than InlineTextMax that a
// record keeps: its first 1024 bytes, cut at a rune boundary, and a note of
// the whole size. A text that fits is returned as is.
func ClipText(text string) string {
	if len(text) <= InlineTextMax {
		return text
	}
	n := 1024
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return fmt.Sprintf("%s… [%d bytes in all]", text[:n], len(text))
}

// WriteTaskText writes the whole text of task id to its own file (0600,
// tasks/<id>.txt): a temporary file, fsync, rename, fsync of the directory,
// so the file is durable before a record points at it. It returns the path.
func (s *Store) WriteTaskText(id, text string) (string, error) {
	if !ValidTaskID(id) {
		return "", fmt.Errorf("task id %q: want t_ and 8 lowercase letters or digits", id)
	}
	p := s.TaskFile(FileText, id)
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w (set RUNNER_STATE_DIR to a writable directory)", dir, err)
	}
	if err := atomicfile.Write(p, []byte(text), 0o600, true); err != nil {
		return "", fmt.Errorf("write the text of task %s to %s: %w (is the disk full?)", id, p, err)
	}
	return p, nil
}

// TaskText returns the whole text of t: its record's Text, or the content
// of its TextFile.
func (s *Store) TaskText(t *Task) (string, error) {
	if t.TextFile == "" {
		return t.Text, nil
	}
	b, err := readFile(t.TextFile)
	if err != nil {
		return "", fmt.Errorf("read the text of task %s: %w (the task's text file is gone; its beginning is in 'runner status %s')", t.ID, err, t.ID)
	}
	return string(b), nil
}

// removeTaskFiles removes every per-task file of pruned tasks — text,
// transcript, supervisor log, hook events, hook directory — so that a
// machine that runs for weeks does not keep the files of tasks whose
// records are gone (a missing file is no error; an agent still writing to
// an unlinked transcript keeps writing to it until it exits).
func (s *Store) removeTaskFiles(ids []string) {
	for _, id := range ids {
		if !ValidTaskID(id) {
			continue
		}
		for _, kind := range []TaskFileKind{FileText, FileLog, FileSupervisorLog, FileEvents, FileChangesIndex} {
			os.Remove(s.TaskFile(kind, id))
		}
		os.RemoveAll(s.TaskFile(FileHookDir, id))
		os.RemoveAll(s.TaskFile(FileDoorDir, id))
		os.RemoveAll(s.TaskFile(FileHomeDir, id))
	}
}

// RecordText prepares the record of a new task's text: a text longer than
// InlineTextMax is written whole to its own file first (durable before the
// record points at it) and the record keeps its beginning. It returns the
// record's Text and TextFile.
func (s *Store) RecordText(id, text string) (string, string, error) {
	if len(text) <= InlineTextMax {
		return text, "", nil
	}
	file, err := s.WriteTaskText(id, text)
	if err != nil {
		return "", "", err
	}
	return ClipText(text), file, nil
}
