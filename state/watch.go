package state

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/runner-cli/runner/internal/clock"
)

// watchDebounce is the least time between two of Watch's signals: the
// events of a burst of updates (each a rename of state.json and a line of
// the journal) within it are gathered into one.
const watchDebounce = 20 * time.Millisecond

// Watch signals on the returned channel whenever state.json is replaced or
// the journal grows. It watches the directory, not the files (a rename drops
// a per-file watch) and ignores the other files. A change after a quiet
// watchDebounce signals at once (state.json is replaced whole: what the
// caller reads is the update); the changes that follow within watchDebounce
// of a signal are gathered into one more, at its end. A signal not yet
// received is not repeated. The channel is closed when ctx ends. Callers
// re-read the state on each signal. Where no inotify instance is left, it
// looks at the two files every pollEvery instead.
func (s *Store) Watch(ctx context.Context) (<-chan struct{}, error) {
	if err := s.ensureDir(); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = w.Add(s.dir); err != nil {
			w.Close()
		}
	}
	if err != nil {
		// No inotify left to this user (fs.inotify.max_user_instances,
		// 128 by default, is shared by all its processes): look instead.
		return s.pollWatch(ctx), nil
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		defer w.Close()
		var g gather
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if relevant(ev) {
					g.changed(clock.Now(), out)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflow lost events: signal so the caller re-reads.
				g.changed(clock.Now(), out)
			case <-g.fire:
				g.fired(clock.Now(), out)
			}
		}
	}()
	return out, nil
}

// gather is Watch's pacing of its signals: at once after a quiet
// watchDebounce, else one at the end of it (fire).
type gather struct {
	last time.Time // the last signal
	fire <-chan time.Time
}

// changed takes a change at now.
func (g *gather) changed(now time.Time, out chan<- struct{}) {
	switch {
	case g.fire != nil: // one is due already
	case now.Sub(g.last) >= watchDebounce:
		g.fired(now, out)
	default:
		g.fire = time.After(g.last.Add(watchDebounce).Sub(now))
	}
}

// fired signals at now.
func (g *gather) fired(now time.Time, out chan<- struct{}) {
	g.fire, g.last = nil, now
	select {
	case out <- struct{}{}:
	default:
	}
}

func relevant(ev fsnotify.Event) bool {
	switch filepath.Base(ev.Name) {
	case StateFile:
		return ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write) || ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Remove)
	case JournalFile:
		return ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write)
	}
	return false
}

// pollEvery is how often Watch looks at the files when it cannot be told.
const pollEvery = 250 * time.Millisecond

// pollWatch is Watch by looking at state.json and the journal.
func (s *Store) pollWatch(ctx context.Context) <-chan struct{} {
	out := make(chan struct{}, 1)
	type mark struct {
		ino  uint64
		size int64
		mod  time.Time
	}
	look := func() [2]mark {
		var m [2]mark
		for i, f := range []string{s.Path(), s.path(JournalFile)} {
			if fi, err := os.Stat(f); err == nil {
				m[i] = mark{size: fi.Size(), mod: fi.ModTime()}
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					m[i].ino = uint64(st.Ino)
				}
			}
		}
		return m
	}
	go func() {
		defer close(out)
		last := look()
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if m := look(); m != last {
				last = m
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out
}
