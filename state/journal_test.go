package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestJournalAppendAndRead(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	p := &Project{Name: "api", Dir: "/api"}
	for _, ev := range []Event{
		{Kind: EventProjectAdded, Project: "api", ProjectRecord: p},
		{Kind: EventTask, Task: "t_aaaaaaaa", Status: StatusRunning, Message: "started"},
	} {
		if err := s.Journal(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	// A torn line (a write cut short) is skipped, not fatal.
	f, err := os.OpenFile(filepath.Join(s.Dir(), JournalFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-`)
	f.Close()
	events, skipped, err := s.ReadJournal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || skipped != 1 {
		t.Fatalf("read %d events, skipped %d", len(events), skipped)
	}
	if ev := events[0]; ev.Kind != EventProjectAdded || ev.ProjectRecord.Dir != "/api" || ev.PID != os.Getpid() || ev.Time.IsZero() {
		t.Fatalf("first event %+v", ev)
	}
	if ev := events[1]; ev.Status != StatusRunning || ev.Task != "t_aaaaaaaa" {
		t.Fatalf("second event %+v", ev)
	}
}

func TestJournalRotates(t *testing.T) {
	s := openTemp(t)
	s.JournalMaxBytes = 1000
	s.JournalKeep = 2
	ctx := t.Context()
	const n = 100
	for i := range n {
		if err := s.Journal(ctx, Event{Kind: "test", Message: fmt.Sprintf("event %03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for k := 0; k <= 2; k++ {
		fi, err := os.Stat(s.journalPath(k))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > s.JournalMaxBytes {
			t.Errorf("%s is %d bytes, over the limit", s.journalPath(k), fi.Size())
		}
	}
	if _, err := os.Stat(s.journalPath(3)); err == nil {
		t.Error("more rotated files kept than JournalKeep")
	}
	events, _, err := s.ReadJournal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 || len(events) >= n || events[len(events)-1].Message != fmt.Sprintf("event %03d", n-1) {
		t.Fatalf("after rotation read %d events, last %+v", len(events), events[len(events)-1])
	}
	for i := 1; i < len(events); i++ {
		if events[i].Message <= events[i-1].Message {
			t.Fatalf("events out of order at %d: %q after %q", i, events[i].Message, events[i-1].Message)
		}
	}
}

func TestWatch(t *testing.T) {
	s := openTemp(t)
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wait := func(what string) {
		t.Helper()
		select {
		case _, ok := <-ch:
			if !ok {
				t.Fatalf("%s: channel closed", what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no signal within 10 s", what)
		}
	}
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 1); return nil })
	wait("first update")
	// The watch survives the rename that replaced state.json.
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 2); return nil })
	wait("second update")
	if err := s.Journal(ctx, Event{Kind: "test"}); err != nil {
		t.Fatal(err)
	}
	wait("journal append")
	cancel()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("channel not closed after cancel")
		}
	}
}

func TestWatchFilter(t *testing.T) {
	tests := []struct {
		name string
		op   fsnotify.Op
		want bool
	}{
		{StateFile, fsnotify.Create, true},
		{StateFile, fsnotify.Write, true},
		{StateFile, fsnotify.Remove, true},
		{StateFile, fsnotify.Chmod, false},
		{JournalFile, fsnotify.Write, true},
		{JournalFile, fsnotify.Remove, false},
		{tmpFile, fsnotify.Create, false},
		{tmpFile, fsnotify.Write, false},
		{prevFile, fsnotify.Create, false},
		{LockFile, fsnotify.Write, false},
		{journalLock, fsnotify.Create, false},
	}
	for _, tt := range tests {
		ev := fsnotify.Event{Name: filepath.Join("/d", tt.name), Op: tt.op}
		if got := relevant(ev); got != tt.want {
			t.Errorf("relevant(%v) = %v, want %v", ev, got, tt.want)
		}
	}
}

// TestWatchGather: Watch signals a change after a quiet watchDebounce at
// once (a script's `runner wait` sees a task's end as it is recorded, not
// a debounce later), and gathers the changes that follow within
// watchDebounce of a signal into one more at its end.
func TestWatchGather(t *testing.T) {
	out := make(chan struct{}, 1)
	signalled := func() bool {
		select {
		case <-out:
			return true
		default:
			return false
		}
	}
	var g gather
	t0 := clock.Now()
	g.changed(t0, out)
	if !signalled() || g.fire != nil {
		t.Fatal("the first change: no signal at once")
	}
	g.changed(t0.Add(5*time.Millisecond), out)
	g.changed(t0.Add(6*time.Millisecond), out)
	if signalled() || g.fire == nil {
		t.Fatal("changes within watchDebounce of a signal: signalled at once, or none due")
	}
	g.fired(t0.Add(watchDebounce), out)
	if !signalled() || g.fire != nil {
		t.Fatal("the gathered changes: no signal at the end of watchDebounce")
	}
	g.changed(t0.Add(watchDebounce+5*time.Millisecond), out)
	if signalled() || g.fire == nil {
		t.Fatal("a change within watchDebounce of the gathered signal: signalled at once")
	}
	var quiet gather
	quiet.last = t0
	quiet.changed(t0.Add(watchDebounce), out)
	if !signalled() {
		t.Fatal("a change after a quiet watchDebounce: no signal at once")
	}
}

// inotifyInstances counts this process's open inotify instances (testenv).
func inotifyInstances(t *testing.T) int {
	t.Helper()
	n, err := testenv.InotifyInstances()
	if err != nil {
		t.Skip("cannot count inotify instances here:", err)
	}
	return n
}

// TestWatchForPollsFirst: WatchFor (a foreground command's watch) signals
// updates during its first phase by looking at the files, with no
// inotify instance, whose teardown its process's exit would wait for;
// after the phase it takes one and still signals every update.
func TestWatchForPollsFirst(t *testing.T) {
	s := openTemp(t)
	before := inotifyInstances(t)
	signal := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no signal within 10 s", what)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := s.WatchFor(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 1); return nil })
	signal(ch, "an update within the first phase")
	if n := inotifyInstances(t); n != before {
		t.Errorf("within the first phase: %d inotify instances, want %d", n, before)
	}
	cancel()

	ch, err = s.WatchFor(t.Context(), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := clock.Now().Add(10 * time.Second); inotifyInstances(t) == before; time.Sleep(5 * time.Millisecond) {
		if clock.Now().After(deadline) {
			t.Fatal("no inotify instance taken after the first phase")
		}
	}
	for i := range 3 {
		mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 2+i); return nil })
		signal(ch, fmt.Sprintf("update %d after the first phase", i+1))
	}
}
