package follow

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// followGap is the least time between two reads of a follower.
const followGap = 20 * time.Millisecond

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
			return fmt.Errorf("follow the event stream: %w", err)
		}
		t.f, t.off = nf, 0
	}
	for {
		if _, err := t.f.Seek(t.off, 0); err != nil {
			return fmt.Errorf("follow the event stream %s: %w", t.path, err)
		}
		n, _, err := state.ScanEventLines(t.f, t.emit)
		if err != nil {
			return fmt.Errorf("follow the event stream %s: %w", t.path, err)
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

// watch is a follower's own watch of the stream: on the file alone once
// it exists (a follower then wakes only when events are written, not on
// every write of the state), and on the directory while it does not
// (before the first event, and between a rotation's rename and the new
// file).
type watch struct {
	w      *fsnotify.Watcher
	t      *tailer
	dir    string
	onFile bool
	read   []func()
}

// settle reads what the stream holds past t, moves the watch to the file
// once it is there, and calls the read functions.
func (fw *watch) settle() error {
	defer func() {
		for _, fn := range fw.read {
			fn()
		}
	}()
	if err := fw.t.drain(!fw.onFile); err != nil {
		return err
	}
	if !fw.onFile && fw.w.Add(fw.t.path) == nil {
		fw.onFile = true
		_ = fw.w.Remove(fw.dir)
		return fw.t.drain(true) // what came before the watch was on the file
	}
	return nil
}

// see takes a watch event: whether it is the stream's (a read is due),
// and, for a rename or removal of the watched file (a rotation), the
// watch moved back to the directory to see the new file come.
func (fw *watch) see(ev fsnotify.Event) (bool, error) {
	if filepath.Clean(ev.Name) != filepath.Clean(fw.t.path) {
		return false, nil
	}
	if fw.onFile && ev.Has(fsnotify.Rename|fsnotify.Remove) {
		fw.onFile = false
		_ = fw.w.Remove(fw.t.path)
		if err := fw.w.Add(fw.dir); err != nil {
			return false, fmt.Errorf("follow the event stream: watch %s: %w", fw.dir, err)
		}
	}
	return true, nil
}

// followTail is followEvents going on with t (where it left).
func followTail(ctx context.Context, store *state.Store, w *fsnotify.Watcher, t *tailer, read ...func()) error {
	fw := &watch{w: w, t: t, dir: store.Dir(), read: read}
	if err := fw.settle(); err != nil {
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
			if err := fw.settle(); err != nil {
				return err
			}
		case err := <-w.Errors:
			return fmt.Errorf("follow the event stream: watch %s: %w", fw.dir, err)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			due, err := fw.see(ev)
			if err != nil {
				return err
			}
			if !due || later != nil {
				continue // not the stream's, or a read is due already
			}
			if wait := followGap - clock.Since(lastRead); wait > 0 {
				later = time.After(wait)
				continue
			}
			lastRead = clock.Now()
			if err := fw.settle(); err != nil {
				return err
			}
		}
	}
}
