package state

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchDebounce is how long Watch gathers events before it signals, so one
// Update (temp file, link, rename) gives one signal.
const watchDebounce = 20 * time.Millisecond

// Watch signals on the returned channel whenever state.json is replaced or
// the journal grows. It watches the directory, not the files (a rename drops
// a per-file watch), ignores the other files, and gathers the events of
// watchDebounce into one signal; a signal not yet received is not repeated.
// The channel is closed when ctx ends. Callers re-read the state on each
// signal.
func (s *Store) Watch(ctx context.Context) (<-chan struct{}, error) {
	if err := s.ensureDir(); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch state directory %s: %w", s.dir, err)
	}
	if err := w.Add(s.dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch state directory %s: %w", s.dir, err)
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		defer w.Close()
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if relevant(ev) && fire == nil {
					fire = time.After(watchDebounce)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflow lost events: signal so the caller re-reads.
				if fire == nil {
					fire = time.After(watchDebounce)
				}
			case <-fire:
				fire = nil
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out, nil
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
