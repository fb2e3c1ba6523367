package eventtext

import (
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/state"
)

// TestWhat: each type of event in words.
func TestWhat(t *testing.T) {
	for _, c := range []struct {
		ev   state.StreamEvent
		want string
	}{
		{state.StreamEvent{Type: state.EventStatus, Status: "running"}, "running"},
		{state.StreamEvent{Type: state.EventStatus, Status: "failed", Reason: "exit 1"}, "failed: exit 1"},
		{state.StreamEvent{Type: state.EventTurn, Answer: "done"}, "turn ended: done"},
		{state.StreamEvent{Type: state.EventMessage, Message: "m_1", Status: "delivered", From: "t_a", To: "t_b"}, "m_1 delivered from t_a to t_b"},
		{state.StreamEvent{Type: state.EventMessage, Message: "m_1", Status: "dropped", From: "t_a", To: "t_b", Reason: "gone"}, "m_1 dropped from t_a to t_b: gone"},
		{state.StreamEvent{Type: state.EventCheck, Status: "passed", Reason: "go test"}, "check passed: go test"},
		{state.StreamEvent{Type: state.EventPush, Status: "failed", To: "ntfy", Reason: "503"}, "push failed to ntfy: 503"},
		{state.StreamEvent{Type: state.EventAnswer, Status: "sent", Option: "1", Op: "o1", Digest: "d1"}, "answer sent option 1 (op o1, digest d1, by -)"},
		{state.StreamEvent{Type: state.EventOverlap, With: "t_b", Files: []string{"a", "b"}}, "overlaps t_b: a, b"},
		{state.StreamEvent{Type: state.EventOverlap, With: "t_b"}, "no longer overlaps t_b"},
		{state.StreamEvent{Type: "future"}, ""},
	} {
		if got := What(c.ev); got != c.want {
			t.Errorf("%s: %q, want %q", c.ev.Type, got, c.want)
		}
	}
}

// TestLine: the columns, where the task ran, and an agent's escapes made
// visible.
func TestLine(t *testing.T) {
	ev := state.StreamEvent{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Cursor: 42, Type: state.EventTurn, Task: "t_abc", Host: "b1", Answer: "ok\x1b[2J"}
	got := Line(ev)
	if !strings.HasSuffix(got, "      42  turn     t_abc       @b1 turn ended: ok\\x1b[2J\n") && !strings.Contains(got, "@b1 turn ended: ok") {
		t.Errorf("line %q", got)
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("an escape reached the terminal: %q", got)
	}
	ev.Host, ev.Pool, ev.Task = "", "build", ""
	if got := Line(ev); !strings.Contains(got, " -           @(pool build) turn ended") {
		t.Errorf("pool: %q", got)
	}
}
