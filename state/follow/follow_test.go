package follow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

func TestFilterKeep(t *testing.T) {
	t.Parallel()
	at := clock.Now().UTC().Truncate(time.Second)
	status := state.StreamEvent{Type: state.EventStatus, Task: "t_a", Project: "p", Time: at}
	msg := state.StreamEvent{Type: state.EventMessage, Task: "t_b", From: "t_a", To: "t_b", Project: "q", Time: at}
	over := state.StreamEvent{Type: state.EventOverlap, Task: "t_c", With: "t_a", Project: "p", Time: at}
	other := state.StreamEvent{Type: state.EventTurn, Task: "t_d", Project: "q", Time: at.Add(-time.Second)}
	for _, tc := range []struct {
		name string
		f    Filter
		want []bool // status, msg, over, other
	}{
		{"zero", Filter{}, []bool{true, true, true, true}},
		{"task: its own, sent, overlapped", Filter{Task: "t_a"}, []bool{true, true, true, false}},
		{"task: only received", Filter{Task: "t_b"}, []bool{false, true, false, false}},
		{"project", Filter{Project: "q"}, []bool{false, true, false, true}},
		{"since: at the time kept", Filter{Since: at}, []bool{true, true, true, false}},
		{"since: after all", Filter{Since: at.Add(time.Second)}, []bool{false, false, false, false}},
		{"all three", Filter{Task: "t_a", Project: "p", Since: at}, []bool{true, false, true, false}},
	} {
		var got []bool
		for _, ev := range []state.StreamEvent{status, msg, over, other} {
			got = append(got, tc.f.Keep(ev))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Keep = %v, want %v", tc.name, got, tc.want)
		}
		if zero := tc.name == "zero"; tc.f.IsZero() != zero {
			t.Errorf("%s: IsZero = %v, want %v", tc.name, !zero, zero)
		}
	}
}

// writeProjectStep records step i of task id in project p: one status
// event.
func writeProjectStep(t *testing.T, store *state.Store, id, p string, i int) {
	t.Helper()
	if err := store.Update(t.Context(), func(st *state.State) error {
		tk := st.Task(id)
		if tk == nil {
			tk = &state.Task{ID: id, Agent: "sim", Dir: "/tmp", Project: p, Created: clock.Now()}
			st.Tasks[id] = tk
		}
		return tk.SetStatus(state.StatusRunning, clock.Now(), "step "+strings.Repeat("x", i))
	}); err != nil {
		t.Fatal(err)
	}
}

// The history: lines as written with no filter, decoded events through
// a filter, only after the cursor, and a warning for what was rotated
// away.
func TestRunHistory(t *testing.T) {
	_, store := smallStreamStore(t)
	a, b := state.RandomTaskID(), state.RandomTaskID()
	for i := range 4 {
		writeProjectStep(t, store, a, "pa", i)
		writeProjectStep(t, store, b, "pb", i)
	}
	// cursors 1..8: a has the odd ones, b the even ones
	var lines []string
	err := Run(t.Context(), Options{Store: store, After: 5, Line: func(l []byte) { lines = append(lines, string(l)) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || !strings.HasPrefix(lines[0], `{"cursor":6,`) || !strings.HasSuffix(lines[2], "\n") {
		t.Errorf("lines after 5: %q", lines)
	}
	var evs []uint64
	err = Run(t.Context(), Options{Store: store, Filter: Filter{Project: "pa"}, Event: func(ev state.StreamEvent) {
		if ev.Task != a {
			t.Errorf("event of %s through a filter of %s's project", ev.Task, a)
		}
		evs = append(evs, ev.Cursor)
	}})
	if err != nil || !slices.Equal(evs, []uint64{1, 3, 5, 7}) {
		t.Errorf("events of project pa: %v, %v", evs, err)
	}
	// a filter with Line: the kept lines as written
	lines = nil
	err = Run(t.Context(), Options{Store: store, Filter: Filter{Task: b}, Line: func(l []byte) { lines = append(lines, string(l)) }})
	if err != nil || len(lines) != 4 || !strings.HasPrefix(lines[0], `{"cursor":2,`) {
		t.Errorf("lines of %s: %q, %v", b, lines, err)
	}
	// nothing is lost from a cursor still kept
	lost := uint64(0)
	if err := Run(t.Context(), Options{Store: store, After: 1, Line: func([]byte) {}, Lost: func(f uint64) { lost = f }}); err != nil || lost != 0 {
		t.Errorf("Lost(%d), %v from a cursor kept", lost, err)
	}
}

func TestRunLost(t *testing.T) {
	_, store := smallStreamStore(t)
	store.EventsMaxBytes = 400 // a line or two a file
	id := state.RandomTaskID()
	for i := range 40 {
		writeProjectStep(t, store, id, "", i)
	}
	var lost uint64
	var first uint64
	err := Run(t.Context(), Options{Store: store, After: 1, Lost: func(f uint64) { lost = f }, Line: func(l []byte) {
		if first == 0 {
			first, _ = state.EventCursor(l)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if lost < 3 || first != lost {
		t.Errorf("Lost(%d), first line read %d: want the oldest kept (past 2) for both", lost, first)
	}
}

func TestRunNeedsSink(t *testing.T) {
	_, store := smallStreamStore(t)
	for _, o := range []Options{{Store: store}, {Line: func([]byte) {}}} {
		if err := Run(t.Context(), o); !errors.Is(err, errNoSink) {
			t.Errorf("Run(%+v) = %v, want errNoSink", o, err)
		}
	}
}

// Following: the history, then Following, then each new event once, until
// the context ends (nil).
func TestRunFollow(t *testing.T) {
	_, store := smallStreamStore(t)
	id := state.RandomTaskID()
	writeStep(t, store, id, 0)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	seen := make(chan uint64, 100)
	following := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Store: store, Follow: true, Following: func() { close(following) },
			Event: func(ev state.StreamEvent) { seen <- ev.Cursor }})
	}()
	want := uint64(1)
	next := func() {
		t.Helper()
		select {
		case got := <-seen:
			if got != want {
				t.Fatalf("cursor %d, want %d", got, want)
			}
			want++
		case err := <-done:
			t.Fatalf("Run stopped at %d: %v", want, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("cursor %d never came", want)
		}
	}
	next()
	<-following
	for i := 1; i < 5; i++ {
		writeStep(t, store, id, i)
		next()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-seen:
		t.Errorf("cursor %d passed on twice", c)
	default:
	}
}

// The tailer reads the rest of a rotated file before the new one, and
// each line once; behind says when the stream has more than it read.
func TestTailerRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, state.EventsFile)
	line := func(c int) string { return `{"cursor":` + string(rune('0'+c)) + `,"v":1}` + "\n" }
	appendTo := func(p string, cs ...int) {
		t.Helper()
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			f.WriteString(line(c))
		}
		f.Close()
	}
	var got []string
	tl := &tailer{path: path, emit: func(l []byte) bool { got = append(got, string(l)); return true }}
	defer tl.close()
	if tl.behind() {
		t.Error("behind with no file")
	}
	if err := tl.drain(true); err != nil || len(got) != 0 {
		t.Fatalf("no file: %q, %v", got, err)
	}
	appendTo(path, 1, 2)
	if !tl.behind() {
		t.Error("not behind a new file")
	}
	if err := tl.drain(false); err != nil || !slices.Equal(got, []string{line(1), line(2)}) {
		t.Fatalf("first read: %q, %v", got, err)
	}
	if tl.behind() {
		t.Error("behind once read")
	}
	// a line being written (no newline yet) waits for the next read
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	f.WriteString(`{"cursor":3,`)
	f.Close()
	if err := tl.drain(false); err != nil || len(got) != 2 {
		t.Fatalf("half a line read: %q, %v", got, err)
	}
	f, _ = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	f.WriteString(`"v":1}` + "\n")
	f.Close()
	appendTo(path, 4)
	// rotated: the old file renamed, a new one made
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendTo(path, 5)
	if !tl.behind() {
		t.Error("not behind a rotation")
	}
	// without a look at the name, only the old file
	if err := tl.drain(false); err != nil || len(got) != 4 {
		t.Fatalf("read without a look at the name: %q, %v", got, err)
	}
	if err := tl.drain(true); err != nil || !slices.Equal(got, []string{line(1), line(2), line(3), line(4), line(5)}) {
		t.Fatalf("across the rotation: %q, %v", got, err)
	}
	if tl.behind() {
		t.Error("behind once the new file is read")
	}
}
