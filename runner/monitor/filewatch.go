package monitor

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// pollEvery is how often a fileWatch without inotify looks at its files.
const pollEvery = 250 * time.Millisecond

// fastPoll is how often a fileWatch looks at its files itself during its
// first Monitor.PollFirst, before it takes an inotify instance.
const fastPoll = time.Millisecond

// fileWatch tells of writes to a few files (each only ever appended to):
// through inotify (fsnotify) on the files themselves, so that a write to
// another task's file does not wake this supervisor, else on their
// directory. Where no inotify instance is left to this user
// (fs.inotify.max_user_instances, 128 by default: a few hundred
// supervisors at once exhaust it), it looks at the files' sizes every
// pollEvery instead: a turn then ends up to that much later, but it ends,
// rather than failing the task. With a first phase (Monitor.PollFirst) it
// looks at them every fastPoll for that long, and only then takes inotify.
type fileWatch struct {
	Events <-chan fsnotify.Event
	Errors <-chan error
	// Polling is true when it looks at the files every pollEvery rather
	// than being told (or looking every fastPoll).
	Polling bool
	close   func()
}

// noInotify makes watchFiles poll, as where inotify is exhausted (tests).
var noInotify = false

// watchFiles watches files ("" entries are skipped), looking at them
// itself for its first pollFirst (none: inotify at once).
func watchFiles(pollFirst time.Duration, files ...string) *fileWatch {
	var names []string
	for _, f := range files {
		if f != "" {
			names = append(names, f)
		}
	}
	if pollFirst > 0 && !noInotify {
		return pollThenNotify(names, pollFirst)
	}
	w, err := notify(names)
	if err != nil {
		return pollFiles(names)
	}
	// Closing an inotify watcher waits for its reader to wake and go, and
	// for the kernel to tear its marks down: 15-30 ms here, the largest
	// part of the time between a turn-end hook's line and the record of
	// the turn's end. No one waits on it: it goes in the background.
	return &fileWatch{Events: w.Events, Errors: w.Errors, close: func() { go w.Close() }}
}

// notify is an inotify watcher on names (each file, else its directory),
// or an error where no instance or watch is left.
func notify(names []string) (*fsnotify.Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if noInotify {
		w.Close()
		return nil, errNoInotify
	}
	for _, f := range names {
		if w.Add(f) != nil && w.Add(filepath.Dir(f)) != nil {
			w.Close() // out of watches: poll them all
			return nil, errNoInotify
		}
	}
	return w, nil
}

// pollThenNotify is a fileWatch that looks at the files itself, every
// fastPoll, for its first pollFirst, and then takes inotify (where none is
// left, it goes on looking every pollEvery). A watch closed within
// pollFirst never had an inotify instance, whose teardown its process's
// exit would wait for (Monitor.PollFirst).
func pollThenNotify(names []string, pollFirst time.Duration) *fileWatch {
	return polled(names, fastPoll, pollFirst)
}

// polled is a fileWatch that looks at the files every every, and, from
// switchAfter on (zero: never), is told by inotify instead.
func polled(names []string, every, switchAfter time.Duration) *fileWatch {
	events, errs := make(chan fsnotify.Event, len(names)), make(chan error)
	stop := make(chan struct{})
	p := newPoller(names)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		var phase <-chan time.Time
		if switchAfter > 0 {
			timer := time.NewTimer(switchAfter)
			defer timer.Stop()
			phase = timer.C
		}
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if !p.look(events, stop) {
					return
				}
			case <-phase:
				phase = nil
				w, err := notify(names)
				if err != nil {
					t.Reset(pollEvery)
					continue
				}
				// A write between the last look and the watch: one look
				// more, after the watch is on.
				if p.look(events, stop) {
					forward(w, events, errs, stop)
				}
				go w.Close()
				return
			}
		}
	}()
	return &fileWatch{Events: events, Errors: errs, Polling: every >= pollEvery, close: func() { close(stop) }}
}

// forward passes w's events and errors on until stop.
func forward(w *fsnotify.Watcher, events chan<- fsnotify.Event, errs chan<- error, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			select {
			case events <- ev:
			case <-stop:
				return
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			select {
			case errs <- err:
			case <-stop:
				return
			}
		}
	}
}

// pollFiles is a fileWatch that looks at the files' sizes and times every
// pollEvery.
func pollFiles(names []string) *fileWatch { return polled(names, pollEvery, 0) }

// poller looks at files' sizes and times, and tells of those that moved
// since its last look.
type poller struct {
	names []string
	last  []mark
}

type mark struct {
	size int64
	mod  time.Time
}

func newPoller(names []string) *poller {
	p := &poller{names: names, last: make([]mark, len(names))}
	for i, f := range names {
		p.last[i] = markOf(f)
	}
	return p
}

func markOf(f string) mark {
	fi, err := os.Stat(f)
	if err != nil {
		return mark{size: -1}
	}
	return mark{fi.Size(), fi.ModTime()}
}

// look sends a write event for each file that moved; false once stop is
// closed.
func (p *poller) look(events chan<- fsnotify.Event, stop <-chan struct{}) bool {
	for i, f := range p.names {
		if m := markOf(f); m != p.last[i] {
			p.last[i] = m
			select {
			case events <- fsnotify.Event{Name: f, Op: fsnotify.Write}:
			case <-stop:
				return false
			}
		}
	}
	return true
}

var errNoInotify = errors.New("no inotify")

// Close stops the watch.
func (w *fileWatch) Close() { w.close() }
