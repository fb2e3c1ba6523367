package follow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/runner-cli/runner/state"
)

// Filter selects the events Run passes on; its zero value keeps every
// event.
type Filter struct {
	// Task keeps the events of this task (its full id): its own, the
	// messages it sent, and its overlaps with other tasks.
	Task string
	// Project keeps the events of this project.
	Project string
	// Host keeps the events of tasks on this host (state.HostLocal:
	// this machine's).
	Host string
	// Since keeps the events from this time on.
	Since time.Time
}

// IsZero reports whether f keeps every event.
func (f Filter) IsZero() bool {
	return f.Task == "" && f.Project == "" && f.Host == "" && f.Since.IsZero()
}

// Keep reports whether ev passes f.
func (f Filter) Keep(ev state.StreamEvent) bool {
	return (f.Task == "" || ev.Task == f.Task || ev.From == f.Task || ev.With == f.Task) &&
		(f.Project == "" || ev.Project == f.Project) && (f.Since.IsZero() || !ev.Time.Before(f.Since)) &&
		(f.Host == "" || ev.Task != "" && state.OnHost(f.Host, ev.Host, ev.Pool))
}

// Options say what Run reads and where it sends it.
type Options struct {
	// Store is the state whose event stream is read.
	Store *state.Store
	// After passes only the events whose cursor is greater (0: from the
	// oldest event kept).
	After uint64
	// Follow keeps reading as events are written, until the context ends.
	Follow bool
	// Filter selects the events passed on.
	Filter Filter
	// Line, when set, receives the line of each event that passes Filter
	// as written (its newline included; the slice is Run's, valid only
	// during the call). With a zero Filter nothing but the cursor is
	// decoded, so a follower of a busy stream costs little.
	Line func(line []byte)
	// Event receives each event that passes Filter, decoded; used when
	// Line is nil. A line that does not decode is skipped.
	Event func(ev state.StreamEvent)
	// Lost, when set, is told that events after After were rotated away
	// before they were read: first is the cursor of the oldest one kept,
	// where Run went on.
	Lost func(first uint64)
	// Following, when set, is called once the history is read, before
	// Run waits for new events (where a caller lowers its priority: a
	// follower only reads).
	Following func()
}

// errNoSink: Options with neither Line nor Event.
var errNoSink = errors.New("follow: Options need a Store and a Line or an Event to send events to")

// Run passes on the events of o.Store's stream after o.After that pass
// o.Filter, oldest first, and with o.Follow each event written after them
// as it is written, until ctx ends (then it returns nil). An error says
// which read or watch failed.
func Run(ctx context.Context, o Options) error {
	if o.Store == nil || (o.Line == nil && o.Event == nil) {
		return errNoSink
	}
	emit := o.emitter()
	// Watch before reading, so that nothing written in between is missed.
	var w *fsnotify.Watcher
	if o.Follow {
		dir := o.Store.Dir()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("follow the event stream: %w", err)
		}
		var err error
		if w, err = fsnotify.NewWatcher(); err != nil {
			return fmt.Errorf("follow the event stream: %w", err)
		}
		defer w.Close()
		if err := w.Add(dir); err != nil {
			return fmt.Errorf("follow the event stream: watch %s: %w", dir, err)
		}
	}
	first, err := o.Store.ReadEvents(o.After, emit)
	if err != nil {
		return err
	}
	if o.After > 0 && first > o.After+1 && o.Lost != nil {
		o.Lost(first)
	}
	if !o.Follow {
		return nil
	}
	if o.Following != nil {
		o.Following()
	}
	return followShared(ctx, o.Store, w, emit)
}

// emitter is the function every read line goes through: it drops a line
// that is no event or whose cursor was passed on already, and sends the
// others through o's filter to its sink.
func (o Options) emitter() func(line []byte) bool {
	raw := o.Line != nil && o.Filter.IsZero()
	last := o.After
	return func(line []byte) bool {
		c, ok := state.EventCursor(line)
		if !ok || c <= last {
			return true
		}
		last = c
		if raw {
			o.Line(line)
			return true
		}
		ev, err := state.ParseEvent(line)
		switch {
		case err != nil || !o.Filter.Keep(ev):
		case o.Line != nil:
			o.Line(line)
		default:
			o.Event(ev)
		}
		return true
	}
}
