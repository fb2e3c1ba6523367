package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/runner-cli/runner/state"
)

// A follower started before the first event reads every event once, in
// order, across rotations of the stream.
func TestFollowEventsAcrossRotations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	store.EventsMaxBytes = 20 << 10
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
		if err := store.Update(ctx, func(st *state.State) error {
			tk := st.Task(id)
			if tk == nil {
				tk = &state.Task{ID: id, Agent: "sim", Dir: "/tmp", Created: time.Now()}
				st.Tasks[id] = tk
			}
			return tk.SetStatus(state.StatusRunning, time.Now(), fmt.Sprintf("step %d with some words to fill the line", i))
		}); err != nil {
			t.Fatal(err)
		}
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
