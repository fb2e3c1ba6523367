package monitor

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

// TestLongEventLineSkipped: a 100 MB line without a newline in the hook's
// events file (the agent can write it) is read with memory bounded, said
// once and skipped; the turn-end event written after its end is taken,
// and nothing of the long line's tail is taken for a line.
func TestLongEventLineSkipped(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events.jsonl")
	f, err := os.Create(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(100 << 20); err != nil { // 100 MB of NULs, no newline
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 2); err != nil {
		t.Fatal(err)
	}
	var long []int64
	m := &Monitor{Events: events, LongLine: func(_ string, off int64) { long = append(long, off) }}
	if ev, alloc := hookNowAlloc(m); ev != nil || alloc > 16<<20 {
		t.Fatalf("HookNow on a 100 MB line = %v, allocating %d MiB; want nil, under 16 MiB", ev, alloc>>20)
	}
	if len(long) != 1 || long[0] != 0 {
		t.Errorf("LongLine told of %v, want the line at 0", long)
	}
	// The long line's tail, itself an event, then a line of its own.
	tail := `{"hook_event_name":"Stop","session_id":"s1","last_assistant_message":"the tail"}` + "\n"
	own := `{"hook_event_name":"Stop","session_id":"s1","last_assistant_message":"its own line"}` + "\n"
	if _, err := f.WriteString(tail + own); err != nil {
		t.Fatal(err)
	}
	ev, alloc := hookNowAlloc(m)
	if ev == nil || ev.Answer != "its own line" || alloc > 16<<20 {
		t.Fatalf("HookNow = %+v, allocating %d MiB; want the event on its own line, under 16 MiB", ev, alloc>>20)
	}

	// A wait's reader, read by read: the long line ends later, a line
	// just under the bound is read whole.
	p := filepath.Join(t.TempDir(), "events.jsonl")
	write := func(s string) {
		t.Helper()
		g, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if _, err := g.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	long = nil
	lt := &lineTail{file: p, long: func(_ string, off int64) { long = append(long, off) }}
	read := func() []string {
		var got []string
		lt.read(func(l string) { got = append(got, l) })
		return got
	}
	write("a\n" + strings.Repeat("x", MaxLine+1))
	if got := read(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("first read = %.40q, want [a]", got)
	}
	write("more of it")
	if got := read(); len(got) != 0 {
		t.Fatalf("second read = %.40q, want nothing", got)
	}
	justUnder := strings.Repeat("y", MaxLine)
	write(" and its end\nb\n" + justUnder + "\nc")
	if got := read(); len(got) != 2 || got[0] != "b" || got[1] != justUnder {
		t.Fatalf("third read = %.40q, want [b, %d y's]", got, MaxLine)
	}
	write("\n")
	if got := read(); len(got) != 1 || got[0] != "c" {
		t.Fatalf("fourth read = %.40q, want [c]", got)
	}
	if len(long) != 1 || long[0] != 2 {
		t.Errorf("LongLine told of %v, want the line at 2", long)
	}
}

// TestEventsFileNotAFile: a FIFO in the events file's place is not
// waited on.
func TestEventsFileNotAFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "events.jsonl")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // a reader still waiting (the test failed) is let go
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	if ev := (&Monitor{Events: p}).HookNow(); ev != nil {
		t.Fatalf("HookNow = %+v", ev)
	}
}

// hookNowAlloc is m.HookNow() and the bytes allocated meanwhile.
func hookNowAlloc(m *Monitor) (*profile.HookEvent, uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ev := m.HookNow()
	runtime.ReadMemStats(&after)
	return ev, after.TotalAlloc - before.TotalAlloc
}
