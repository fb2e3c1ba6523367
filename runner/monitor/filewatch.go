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

// fileWatch tells of writes to a few files (each only ever appended to):
// through inotify (fsnotify) on the files themselves, so that a write to
// another task's file does not wake this supervisor, else on their
// directory. Where no inotify instance is left to this user
// (fs.inotify.max_user_instances, 128 by default: a few hundred
// supervisors at once exhaust it), it looks at the files' sizes every
// pollEvery instead: a turn then ends up to that much later, but it ends,
// rather than failing the task.
type fileWatch struct {
	Events <-chan fsnotify.Event
	Errors <-chan error
	// Polling is true when it looks at the files rather than being told.
	Polling bool
	close   func()
}

// noInotify makes watchFiles poll, as where inotify is exhausted (tests).
var noInotify = false

// watchFiles watches files ("" entries are skipped).
func watchFiles(files ...string) *fileWatch {
	var names []string
	for _, f := range files {
		if f != "" {
			names = append(names, f)
		}
	}
	w, err := fsnotify.NewWatcher()
	if err == nil && noInotify {
		w.Close()
		err = errNoInotify
	}
	if err == nil {
		ok := true
		for _, f := range names {
			if w.Add(f) != nil && w.Add(filepath.Dir(f)) != nil {
				ok = false // out of watches: poll them all
				break
			}
		}
		if ok {
			// Closing an inotify watcher waits for its reader to wake and
			// go: 15-30 ms here, the largest part of the time between a
			// turn-end hook's line and the record of the turn's end. No
			// one waits on it: it goes in the background.
			return &fileWatch{Events: w.Events, Errors: w.Errors, close: func() { go w.Close() }}
		}
		w.Close()
	}
	return pollFiles(names)
}

// pollFiles is a fileWatch that looks at the files' sizes and times.
func pollFiles(names []string) *fileWatch {
	events := make(chan fsnotify.Event, len(names))
	stop := make(chan struct{})
	type mark struct {
		size int64
		mod  time.Time
	}
	look := func(f string) mark {
		fi, err := os.Stat(f)
		if err != nil {
			return mark{size: -1}
		}
		return mark{fi.Size(), fi.ModTime()}
	}
	last := make([]mark, len(names))
	for i, f := range names {
		last[i] = look(f)
	}
	go func() {
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			for i, f := range names {
				if m := look(f); m != last[i] {
					last[i] = m
					select {
					case events <- fsnotify.Event{Name: f, Op: fsnotify.Write}:
					case <-stop:
						return
					}
				}
			}
		}
	}()
	return &fileWatch{Events: events, Errors: make(chan error), Polling: true, close: func() { close(stop) }}
}

var errNoInotify = errors.New("no inotify")

// Close stops the watch.
func (w *fileWatch) Close() { w.close() }
