package monitor

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/testenv"
)

// inotifyFDs counts this process's open inotify instances (testenv).
func inotifyFDs(t *testing.T) int {
	t.Helper()
	n, err := testenv.InotifyInstances()
	if err != nil {
		t.Skip("cannot count inotify instances here:", err)
	}
	return n
}

// written appends to f and waits for the watch's event about it.
func written(t *testing.T, w *fileWatch, f, what string) {
	t.Helper()
	appendLine(t, f, "x")
	select {
	case ev := <-w.Events:
		if ev.Name != f || !ev.Has(fsnotify.Write) {
			t.Fatalf("%s: event %v, want a write to %s", what, ev, f)
		}
	case err := <-w.Errors:
		t.Fatalf("%s: %v", what, err)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no event for a write to %s", what, f)
	}
}

// TestPollFirst: a watch with a first phase (Monitor.PollFirst: a
// foreground command's) tells of writes by looking at its files, and
// holds no inotify instance, whose teardown its process's exit would wait
// for, while the phase lasts; after it, the watch takes one and still
// tells of writes, none lost across the switch.
func TestPollFirst(t *testing.T) {
	f := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	before := inotifyFDs(t)

	w := watchFiles(time.Hour, f)
	if w.Polling {
		t.Error("a watch that looks every millisecond says it polls (every pollEvery)")
	}
	written(t, w, f, "within the first phase")
	if n := inotifyFDs(t); n != before {
		t.Errorf("within the first phase: %d inotify instances, want %d", n, before)
	}
	w.Close()

	w = watchFiles(20*time.Millisecond, f)
	defer w.Close()
	for deadline := clock.Now().Add(10 * time.Second); inotifyFDs(t) == before; time.Sleep(5 * time.Millisecond) {
		if clock.Now().After(deadline) {
			t.Fatal("no inotify instance taken after the first phase")
		}
	}
	for i := range 3 {
		written(t, w, f, "after the first phase, write "+string(rune('1'+i)))
	}
}
