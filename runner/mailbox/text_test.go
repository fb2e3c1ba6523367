package mailbox

import (
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/state"
)

// TestWriteOutcomes: a line a recipient, the refused ones left to the
// error.
func TestWriteOutcomes(t *testing.T) {
	var b strings.Builder
	WriteOutcomes(&b, []Outcome{{To: "t_a", ID: "m_1", Result: MsgQueued, Reason: "t_a is busy"},
		{To: "t_b", Result: MsgRefused, Reason: "max hops"}})
	if want := "m_1 → t_a: queued (t_a is busy)\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestWriteInbox: each message's line, in and out, its age at now, the
// reason of one no longer pending; escapes in the text are made visible;
// no messages says so.
func TestWriteInbox(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	var b strings.Builder
	WriteInbox(&b, "t_me", nil, now)
	if want := "no messages to or from t_me\n"; b.String() != want {
		t.Errorf("got %q", b.String())
	}
	b.Reset()
	WriteInbox(&b, "t_me", []Entry{
		{Message: &state.Message{ID: "m_1", From: "t_you", To: "t_me", Type: state.MessageRequest, Status: state.MessagePending,
			Hops: 1, Created: now.Add(-90 * time.Second), Text: "first line\nsecond", Reason: "waits"}, Direction: "in"},
		{Message: &state.Message{ID: "m_2", From: "t_me", To: "t_you", Type: state.MessageResult, Status: state.MessageDelivered,
			Created: now.Add(-2 * time.Hour), Text: "done \x1b[31mred", Reason: "typed in"}, Direction: "out"},
	}, now)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "m_1  ← t_you  request  pending  hop 1  ") || !strings.HasSuffix(lines[0], "first line") {
		t.Errorf("line 1 %q", lines)
	}
	if len(lines) == 2 && (!strings.HasPrefix(lines[1], "m_2  → t_you  result  delivered  hop 0  ") || !strings.HasSuffix(lines[1], "(typed in)") || strings.Contains(lines[1], "\x1b")) {
		t.Errorf("line 2 %q", lines[1])
	}
}

// TestWriteQueues: a line a queue, its deliveries and its oldest age;
// none says so.
func TestWriteQueues(t *testing.T) {
	var b strings.Builder
	WriteQueues(&b, nil)
	WriteQueues(&b, []QueueEntry{{Task: "t_a", Status: state.StatusRunning, Pending: 2, Delivering: 1, OldestAgeMS: 61400},
		{Task: "t_b", Status: state.StatusReady, Delivering: 1}})
	want := "no messages waiting\nt_a  running      2 pending, 1 delivering  oldest 1m1s\nt_b  ready        0 pending, 1 delivering\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
