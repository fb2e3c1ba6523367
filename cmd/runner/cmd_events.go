package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/state"
)

// eventsOptions are the flags of runner events.
type eventsOptions struct {
	follow, asJSON bool
	since, after   string
	project, task  string
}

func (a *app) newEventsCmd() *cobra.Command {
	var o eventsOptions
	cmd := &cobra.Command{
		Use:   "events [--follow] [--json] [--since T | --after CURSOR] [--project P] [--task ID]",
		Short: "Print every change of tasks and messages, and follow them as they happen",
		Long: `Print the event stream: one line per change — a task's status with its reason, the
end of a turn with the first line of its answer, a message posted, delivered,
dropped or failed, an overlap between tasks — oldest first. Each event has a
cursor: --after CURSOR prints only what came after it, so a reader that stops
goes on exactly where it left, nothing missed or repeated. --since takes a
duration (1h) or a time (RFC 3339). --follow keeps printing as changes are
written (it wakes on the write, it does not poll) until interrupted (exit
130, as any interrupted command).

With --json each line is a JSON object (schema version "v": 1):
  {"cursor", "v", "time", "type": "status"|"turn"|"message"|"overlap",
   "task", "project", "status", "reason", "answer", "message", "from", "to",
   "with", "files"}
Exit codes: 0; 2 bad flags (an unknown task, a cursor that is no number).`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runEvents(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.BoolVarP(&o.follow, "follow", "f", false, "keep printing changes as they are written")
	f.StringVar(&o.since, "since", "", "only events from this long ago (1h) or this time (RFC 3339) on")
	f.StringVar(&o.after, "after", "", "only events after this cursor")
	f.StringVar(&o.project, "project", "", "only events of this project")
	f.StringVar(&o.task, "task", "", "only events of this task (its id or a unique prefix)")
	a.jsonFlag(cmd, &o.asJSON, "print each event as one JSON line")
	return cmd
}

func (a *app) runEvents(ctx context.Context, o eventsOptions) error {
	var after uint64
	var since time.Time
	switch {
	case o.after != "" && o.since != "":
		return exit.Usagef("events: give --since or --after, not both")
	case o.after != "":
		n, err := strconv.ParseUint(o.after, 10, 64)
		if err != nil {
			return exit.Usagef("--after %q: a cursor is the number an event's \"cursor\" gives", o.after)
		}
		after = n
	case o.since != "":
		if d, err := time.ParseDuration(o.since); err == nil {
			since = clock.Now().Add(-d)
		} else if t, err := time.Parse(time.RFC3339, o.since); err == nil {
			since = t
		} else {
			return exit.Usagef("--since %q: give a duration (90m) or a time (2026-11-27T06:00:00Z)", o.since)
		}
	}
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	store := env.Store
	task := ""
	if o.task != "" {
		st, err := store.Read(ctx)
		if err != nil {
			return err
		}
		t, err := st.FindTask(o.task)
		if err != nil {
			return exit.Usagef("%v (see 'runner ps --all')", err)
		}
		task = t.ID
	}
	keep := func(ev state.StreamEvent) bool {
		return (task == "" || ev.Task == task || ev.From == task || ev.With == task) &&
			(o.project == "" || ev.Project == o.project) && (since.IsZero() || !ev.Time.Before(since))
	}
	// Unfiltered JSON goes out as written: a follower of a busy stream
	// decodes nothing but the cursor.
	raw := o.asJSON && task == "" && o.project == "" && since.IsZero()
	last := after
	emit := func(line []byte) bool {
		c, ok := state.EventCursor(line)
		if !ok || c <= last {
			return true
		}
		last = c
		if raw {
			a.rawOut.Write(line)
			return true
		}
		if ev, err := state.ParseEvent(line); err == nil && keep(ev) {
			a.printEvent(ev, o.asJSON)
		}
		return true
	}
	// Watch before reading, so that nothing written in between is missed.
	var w *fsnotify.Watcher
	if o.follow {
		if err := os.MkdirAll(store.Dir(), 0o700); err != nil {
			return err
		}
		if w, err = fsnotify.NewWatcher(); err != nil {
			return fmt.Errorf("events --follow: %w", err)
		}
		defer w.Close()
		if err := w.Add(store.Dir()); err != nil {
			return fmt.Errorf("events --follow: watch %s: %w", store.Dir(), err)
		}
	}
	first, err := store.ReadEvents(after, emit)
	if err != nil {
		return err
	}
	if after > 0 && first > after+1 {
		fmt.Fprintf(a.errOut, "runner: events %d to %d were rotated away; going on from %d\n", after+1, first-1, first)
	}
	if !o.follow {
		return nil
	}
	// A follower only reads: it runs when nothing else wants the CPU, so
	// that many of them cost the writers (supervisors, dispatches)
	// nothing on a small machine. An idle machine runs it at once.
	lowerPriority()
	return followShared(ctx, store, w, emit)
}

// tailer reads the event stream's current file as it grows, from where
// it left; a rotation (the file renamed, a new one made) is followed by
// reading the rest of the old one first. emit drops what it saw already
// (by cursor), so a file read twice prints nothing twice.
type tailer struct {
	path string
	emit func(line []byte) bool
	f    *os.File
	off  int64
}

// behind reports whether the stream at t.path holds more than t has read
// (or is another file now).
func (t *tailer) behind() bool {
	fi, err := os.Stat(t.path)
	if err != nil {
		return false
	}
	if t.f == nil {
		return fi.Size() > 0
	}
	cur, err := t.f.Stat()
	return err != nil || !os.SameFile(fi, cur) || fi.Size() > t.off
}

// drain reads what was added; with rotated, it also looks whether the
// name is another file now (only a rename, the directory's watch or a
// hub's wake says so: a write to a watched file needs no look).
func (t *tailer) drain(rotated bool) error {
	if t.f == nil {
		nf, err := os.Open(t.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		t.f, t.off = nf, 0
	}
	for {
		if _, err := t.f.Seek(t.off, 0); err != nil {
			return err
		}
		n, _, err := state.ScanEventLines(t.f, t.emit)
		if err != nil {
			return err
		}
		t.off += n
		if !rotated {
			return nil
		}
		// Rotated: the name is another file now; the old one is read to
		// its end above, go on with the new one.
		cur, err1 := os.Stat(t.path)
		mine, err2 := t.f.Stat()
		if err1 != nil || err2 != nil || os.SameFile(cur, mine) {
			return nil
		}
		t.f.Close()
		if t.f, err = os.Open(t.path); err != nil {
			t.f = nil
			return nil
		}
		t.off = 0
	}
}

func (t *tailer) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// followEvents reads the event stream as it grows, waking on each write
// to it (see tailer). w watches the state directory already. read, when
// set, is called after each read (a hub wakes its clients).
func followEvents(ctx context.Context, store *state.Store, w *fsnotify.Watcher, emit func(line []byte) bool, read ...func()) error {
	t := &tailer{path: store.EventsPath(0), emit: emit}
	defer t.close()
	return followTail(ctx, store, w, t, read...)
}

// followTail is followEvents going on with t (where it left).
func followTail(ctx context.Context, store *state.Store, w *fsnotify.Watcher, t *tailer, read ...func()) error {
	path := t.path
	// Watch the file alone once it exists (a follower then wakes only
	// when events are written, not on every write of the state), and
	// the directory while it does not (before the first event, and
	// between a rotation's rename and the new file).
	dir := store.Dir()
	onFile := false
	settle := func() error {
		defer func() {
			for _, fn := range read {
				fn()
			}
		}()
		if err := t.drain(!onFile); err != nil {
			return err
		}
		if !onFile && w.Add(path) == nil {
			onFile = true
			_ = w.Remove(dir)
			return t.drain(true) // what came before the watch was on the file
		}
		return nil
	}
	if err := settle(); err != nil {
		return err
	}
	// Reads are at least followGap apart: a burst of writes is read in
	// one go, each event still printed well within 50 ms of its write.
	var lastRead time.Time
	var later <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-later:
			later, lastRead = nil, clock.Now()
			if err := settle(); err != nil {
				return err
			}
		case err := <-w.Errors:
			return fmt.Errorf("events --follow: %w", err)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Clean(ev.Name) != filepath.Clean(path) {
				continue
			}
			if onFile && ev.Has(fsnotify.Rename|fsnotify.Remove) {
				// Rotated: see the new file come.
				onFile = false
				_ = w.Remove(path)
				if err := w.Add(dir); err != nil {
					return fmt.Errorf("events --follow: watch %s: %w", dir, err)
				}
			}
			if later != nil {
				continue // a read is due already
			}
			if wait := followGap - clock.Since(lastRead); wait > 0 {
				later = time.After(wait)
				continue
			}
			lastRead = clock.Now()
			if err := settle(); err != nil {
				return err
			}
		}
	}
}

// followGap is the least time between two reads of a follower.
const followGap = 20 * time.Millisecond

// printEvent prints one event: a JSON line, or a line for a person (what
// agents wrote is made visible text).
func (a *app) printEvent(ev state.StreamEvent, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(ev)
		a.rawOut.Write(append(b, '\n'))
		return
	}
	var what string
	switch ev.Type {
	case state.EventStatus:
		what = ev.Status
		if ev.Reason != "" {
			what += ": " + ev.Reason
		}
	case state.EventTurn:
		what = "turn ended: " + ev.Answer
	case state.EventMessage:
		what = fmt.Sprintf("%s %s from %s to %s", ev.Message, ev.Status, ev.From, ev.To)
		if ev.Reason != "" {
			what += ": " + ev.Reason
		}
	case state.EventOverlap:
		if len(ev.Files) == 0 {
			what = "no longer overlaps " + ev.With
		} else {
			what = "overlaps " + ev.With + ": " + strings.Join(ev.Files, ", ")
		}
	}
	fmt.Fprintf(a.out, "%s  %6d  %-8s %-11s %s\n", ev.Time.Local().Format("2006-01-02 15:04:05.000"), ev.Cursor, ev.Type,
		textutil.OrDash(ev.Task), textutil.VisibleLine(what))
}
