package follow

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/gofrs/flock"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// smallStreamStore opens a store in a new state directory whose event
// stream rotates every 20 KiB.
func smallStreamStore(t *testing.T) (string, *state.Store) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	store.EventsMaxBytes = 20 << 10
	return dir, store
}

// A follower started before the first event reads every event once, in
// order, across rotations of the stream.
func TestFollowEventsAcrossRotations(t *testing.T) {
	dir, store := smallStreamStore(t)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	seen := make(chan uint64, 1000)
	var last uint64
	done := make(chan error, 1)
	go func() {
		done <- followEvents(ctx, store, w, func(line []byte) bool {
			if c, ok := state.EventCursor(line); ok && c > last {
				last = c
				seen <- c
			}
			return true
		})
	}()
	const n = 300
	id := state.RandomTaskID()
	for i := range n {
		writeStep(t, store, id, i)
	}
	if _, err := os.Stat(store.EventsPath(1)); err != nil {
		t.Fatalf("the stream never rotated: %v", err)
	}
	timeout := time.After(30 * time.Second)
	for want := uint64(1); want <= n; want++ {
		select {
		case got := <-seen:
			if got != want {
				t.Fatalf("cursor %d, want %d", got, want)
			}
		case err := <-done:
			t.Fatalf("the follower stopped at %d: %v", want, err)
		case <-timeout:
			t.Fatalf("cursor %d never came", want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Followers of one state directory share one watch: the first is the hub,
// the others its clients. Each reads every event once, in order, across
// rotations; when the hub stops mid-stream a client takes its place and
// nothing is missed.
func TestFollowEventsShared(t *testing.T) {
	dir, store := smallStreamStore(t)
	type follower struct {
		seen   chan uint64
		done   chan error
		cancel context.CancelFunc
	}
	start := func() *follower {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		if err := w.Add(dir); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		f := &follower{seen: make(chan uint64, 1000), done: make(chan error, 1), cancel: cancel}
		var last uint64
		go func() {
			f.done <- followShared(ctx, store, w, func(line []byte) bool {
				if c, ok := state.EventCursor(line); ok && c > last {
					last = c
					f.seen <- c
				}
				return true
			})
		}()
		return f
	}
	hub := start()
	sock := filepath.Join(dir, eventsSocket)
	for deadline := clock.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if clock.Now().After(deadline) {
			t.Fatalf("no hub socket %s", sock)
		}
	}
	clients := []*follower{start(), start()}
	const n = 300
	id := state.RandomTaskID()
	for i := range n {
		if i == n/2 {
			hub.cancel() // a client takes over
			if err := <-hub.done; err != nil {
				t.Fatalf("the hub: %v", err)
			}
		}
		writeStep(t, store, id, i)
	}
	if _, err := os.Stat(store.EventsPath(1)); err != nil {
		t.Fatalf("the stream never rotated: %v", err)
	}
	if _, err := os.Stat(sock); err != nil {
		t.Errorf("no client took the hub's place: %v", err)
	}
	for k, f := range clients {
		timeout := time.After(30 * time.Second)
		for want := uint64(1); want <= n; want++ {
			select {
			case got := <-f.seen:
				if got != want {
					t.Fatalf("client %d: cursor %d, want %d", k, got, want)
				}
			case err := <-f.done:
				t.Fatalf("client %d stopped at %d: %v", k, want, err)
			case <-timeout:
				t.Fatalf("client %d: cursor %d never came", k, want)
			}
		}
		f.cancel()
		if err := <-f.done; err != nil {
			t.Fatal(err)
		}
	}
}

// writeStep records step i of task id (made at the first): one status
// event.
func writeStep(t *testing.T, store *state.Store, id string, i int) {
	t.Helper()
	if err := store.Update(t.Context(), func(st *state.State) error {
		tk := st.Task(id)
		if tk == nil {
			tk = &state.Task{ID: id, Agent: "sim", Dir: "/tmp", Created: clock.Now()}
			st.Tasks[id] = tk
		}
		return tk.SetStatus(state.StatusRunning, clock.Now(), fmt.Sprintf("step %d with some words to fill the line", i))
	}); err != nil {
		t.Fatal(err)
	}
}

// TestFollowEventsFakeHub: a process of the user's that holds the hub's
// lock and socket and never wakes anyone (with no token, or with the
// right one) does not silence a follower: it leaves the hub and watches
// the stream itself. A link in the lock file's place is not followed.
func TestFollowEventsFakeHub(t *testing.T) {
	for _, withToken := range []bool{false, true} {
		t.Run(fmt.Sprintf("token=%v", withToken), func(t *testing.T) {
			dir, store := smallStreamStore(t)
			sock := filepath.Join(dir, eventsSocket)
			lock := flock.New(sock + ".lock")
			if ok, err := lock.TryLock(); !ok || err != nil {
				t.Fatalf("lock: %v %v", ok, err)
			}
			defer lock.Unlock()
			ln, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					if withToken {
						os.WriteFile(filepath.Join(dir, hubToken), []byte("0123456789abcdef0123456789abcdef\n"), 0o600)
						c.Write([]byte("0123456789abcdef0123456789abcdef\n"))
					}
					// and then nothing, for ever
				}
			}()
			w, err := fsnotify.NewWatcher()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			w.Add(dir)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			seen := make(chan uint64, 100)
			go followShared(ctx, store, w, func(line []byte) bool {
				if c, ok := state.EventCursor(line); ok {
					seen <- c
				}
				return true
			})
			id := state.RandomTaskID()
			for i := range 3 {
				writeStep(t, store, id, i)
			}
			timeout := time.After(30 * time.Second)
			for got := 0; got < 3; {
				select {
				case <-seen:
					got++
				case <-timeout:
					t.Fatalf("a silent hub kept the follower from the stream (%d of 3 events)", got)
				}
			}
		})
	}
	t.Run("lock link", func(t *testing.T) {
		dir, store := smallStreamStore(t)
		victim := filepath.Join(t.TempDir(), "victim")
		os.Symlink(victim, filepath.Join(dir, eventsSocket+".lock"))
		w, _ := fsnotify.NewWatcher()
		defer w.Close()
		w.Add(dir)
		ctx, cancel := context.WithCancel(t.Context())
		seen := make(chan struct{}, 10)
		go followShared(ctx, store, w, func([]byte) bool { seen <- struct{}{}; return true })
		writeStep(t, store, state.RandomTaskID(), 0)
		select {
		case <-seen:
		case <-time.After(30 * time.Second):
			t.Fatal("no event with a link in the lock's place")
		}
		cancel()
		if _, err := os.Lstat(victim); err == nil {
			t.Error("the follower created the file the lock's link points at")
		}
	})
}
