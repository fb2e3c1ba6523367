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
	return s.WatchFor(ctx, 0)
}

// fastPoll is how often WatchFor looks at the files during its first
// phase.
const fastPoll = time.Millisecond

// WatchFor is Watch for a command whose caller waits for its exit (runner
// wait): for its first pollFirst it looks at state.json and the journal
// itself, every fastPoll, and takes an inotify instance only after that.
// The exit of a process that had one waits for the kernel to tear it down
// (an SRCU grace period: 8-23 ms on the machine of docs/benchmarks.md); a
// wait that ends within pollFirst never had one. Zero: inotify at once.
func (s *Store) WatchFor(ctx context.Context, pollFirst time.Duration) (<-chan struct{}, error) {
	if err := s.ensureDir(); err != nil {
		return nil, err
	}
	out := make(chan struct{}, 1)
	if pollFirst <= 0 {
		w, err := s.notify()
		if err != nil {
			// No inotify left to this user (fs.inotify.max_user_instances,
			// 128 by default, is shared by all its processes): look instead.
			return s.pollWatch(ctx), nil
		}
		go s.follow(ctx, w, out, &gather{})
		return out, nil
	}
	go func() {
		var g gather
		last := s.watchMarks()
		t := time.NewTicker(fastPoll)
		defer t.Stop()
		phase := time.NewTimer(pollFirst)
		defer phase.Stop()
		for {
			select {
			case <-ctx.Done():
				close(out)
				return
			case <-g.fire:
				g.fired(clock.Now(), out)
			case <-t.C:
				if m := s.watchMarks(); m != last {
					last = m
					g.changed(clock.Now(), out)
				}
			case <-phase.C:
				w, err := s.notify()
				if err != nil {
					t.Reset(pollEvery) // none left: go on looking, slower
					continue
				}
				// A change between the last look and the watch.
				if s.watchMarks() != last {
					g.changed(clock.Now(), out)
				}
				s.follow(ctx, w, out, &g)
				return
			}
		}
	}()
	return out, nil
}

// notify is an inotify watcher on the state directory.
func (s *Store) notify() (*fsnotify.Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(s.dir); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// follow signals (through g) the changes w tells of until ctx ends, then
// closes out and w.
func (s *Store) follow(ctx context.Context, w *fsnotify.Watcher, out chan struct{}, g *gather) {
	defer close(out)
	defer w.Close()
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
	go func() {
		defer close(out)
		last := s.watchMarks()
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if m := s.watchMarks(); m != last {
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

// watchMark is what pollWatch and WatchFor's first phase compare of a
// file: a rename (a new inode), a write (its size and time).
type watchMark struct {
	ino  uint64
	size int64
	mod  time.Time
}

// watchMarks are state.json's and the journal's marks.
func (s *Store) watchMarks() [2]watchMark {
	var m [2]watchMark
	for i, f := range []string{s.Path(), s.path(JournalFile)} {
		if fi, err := os.Stat(f); err == nil {
			m[i] = watchMark{size: fi.Size(), mod: fi.ModTime()}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				m[i].ino = uint64(st.Ino)
			}
		}
	}
	return m
}
