package state

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

func TestStatusClasses(t *testing.T) {
	tests := []struct {
		s                       Status
		valid, terminal, active bool
	}{
		{StatusQueued, true, false, true},
		{StatusStarting, true, false, true},
		{StatusReady, true, false, true},
		{StatusRunning, true, false, true},
		{StatusNeedsInput, true, false, true},
		{StatusDone, true, true, false},
		{StatusFailed, true, true, false},
		{StatusTimeout, true, true, false},
		{StatusCancelled, true, true, false},
		{StatusExited, true, true, false},
		{StatusOrphaned, true, false, false},
		{"bogus", false, false, false},
		{"", false, false, false},
	}
	for _, tt := range tests {
		if got := tt.s.Valid(); got != tt.valid {
			t.Errorf("%q.Valid() = %v", tt.s, got)
		}
		if got := tt.s.IsTerminal(); got != tt.terminal {
			t.Errorf("%q.IsTerminal() = %v", tt.s, got)
		}
		if got := tt.s.IsActive(); got != tt.active {
			t.Errorf("%q.IsActive() = %v", tt.s, got)
		}
	}
}

func TestSetStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tk := &Task{ID: "t_aaaaaaaa"}
	steps := []struct {
		s      Status
		reason string
	}{
		{StatusQueued, "dispatched"}, {StatusRunning, "text delivered"}, {StatusNeedsInput, "approval menu"},
		{StatusRunning, "answered"}, {StatusDone, "ready marker"},
	}
	for i, st := range steps {
		if err := tk.SetStatus(st.s, t0.Add(time.Duration(i)*time.Second), st.reason); err != nil {
			t.Fatal(err)
		}
	}
	if tk.Status != StatusDone || len(tk.History) != 5 || tk.History[2].Reason != "approval menu" {
		t.Fatalf("task after transitions: %+v", tk)
	}
	if !tk.Started.Equal(t0.Add(time.Second)) || !tk.Ended.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("started %v ended %v", tk.Started, tk.Ended)
	}
	err := tk.SetStatus("weird", t0, "")
	if err == nil || !strings.Contains(err.Error(), "needs_input") || tk.Status != StatusDone || len(tk.History) != 5 {
		t.Fatalf("SetStatus(weird) = %v, task %+v", err, tk)
	}
}

// TestFailedSaysWhy: a task failed with no reason given says so (NoReason);
// another status may have none.
func TestFailedSaysWhy(t *testing.T) {
	tk := &Task{ID: "t_aaaaaaaa"}
	_ = tk.SetStatus(StatusRunning, time.Unix(1, 0), "")
	_ = tk.SetStatus(StatusFailed, time.Unix(2, 0), " ")
	if tk.History[0].Reason != "" || tk.LastReason() != NoReason {
		t.Errorf("reasons %q, %q", tk.History[0].Reason, tk.LastReason())
	}
}

func TestTurnLogBounded(t *testing.T) {
	tk := &Task{}
	if tk.LastTurn() != "" {
		t.Fatal("empty turn log has a last turn")
	}
	for i := range MaxTurns + 7 {
		tk.AddTurn(time.Unix(int64(i), 0), fmt.Sprintf("\n  turn %d  \nsecond line", i))
	}
	if len(tk.Turns) != MaxTurns || tk.Turns[0].Summary != "turn 7" || tk.LastTurn() != fmt.Sprintf("turn %d", MaxTurns+6) {
		t.Fatalf("turns: %d, first %q, last %q", len(tk.Turns), tk.Turns[0].Summary, tk.LastTurn())
	}
}

func TestNewTaskID(t *testing.T) {
	st := New()
	for range 2000 {
		id := st.NewTaskID()
		if !ValidTaskID(id) {
			t.Fatalf("bad id %q", id)
		}
		if st.Tasks[id] != nil {
			t.Fatalf("duplicate id %q", id)
		}
		st.Tasks[id] = &Task{ID: id}
	}
	// Collisions are retried.
	orig := newID
	t.Cleanup(func() { newID = orig })
	seq := []string{"t_aaaaaaaa", "t_aaaaaaaa", "t_bbbbbbbb"}
	newID = func() string { id := seq[0]; seq = seq[1:]; return id }
	st = New()
	st.Tasks["t_aaaaaaaa"] = &Task{}
	if id := st.NewTaskID(); id != "t_bbbbbbbb" {
		t.Fatalf("NewTaskID with a collision = %q", id)
	}
}

func TestValidTaskID(t *testing.T) {
	for id, want := range map[string]bool{
		"t_abc12345": true, "t_ABC12345": false, "t_abc1234": false, "t_abc123456": false,
		"x_abc12345": false, "abc12345": false, "t_abc-2345": false,
	} {
		if got := ValidTaskID(id); got != want {
			t.Errorf("ValidTaskID(%q) = %v", id, got)
		}
	}
}

func TestFindTask(t *testing.T) {
	st := New()
	for _, id := range []string{"t_abc11111", "t_abc22222", "t_xyz00000"} {
		st.Tasks[id] = &Task{ID: id}
	}
	tests := []struct {
		ref, want string
		err       error
	}{
		{"t_abc11111", "t_abc11111", nil},
		{"t_abc1", "t_abc11111", nil},
		{"abc2", "t_abc22222", nil},
		{"x", "t_xyz00000", nil},
		{"t_abc", "", ErrAmbiguousTask},
		{"abc", "", ErrAmbiguousTask},
		{"t_q", "", ErrTaskNotFound},
		{"", "", ErrTaskNotFound},
		{"t_", "", ErrTaskNotFound},
		{"t", "", ErrTaskNotFound},
	}
	for _, tt := range tests {
		got, err := st.FindTask(tt.ref)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("FindTask(%q) = %v, want %v", tt.ref, err, tt.err)
			}
			continue
		}
		if err != nil || got.ID != tt.want {
			t.Errorf("FindTask(%q) = %v, %v; want %s", tt.ref, got, err, tt.want)
		}
	}
	_, err := st.FindTask("abc")
	if !strings.Contains(err.Error(), "t_abc11111, t_abc22222") {
		t.Errorf("ambiguous error does not list candidates: %v", err)
	}
}

func TestTaskListOrder(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := New()
	for _, tk := range []*Task{
		{ID: "t_c", Created: at}, {ID: "t_a", Created: at.Add(time.Second)}, {ID: "t_b", Created: at},
		{ID: "t_d", Created: at.Add(-time.Nanosecond)}, {ID: "t_e", Created: at.In(time.FixedZone("", 3600))},
	} {
		st.Tasks[tk.ID] = tk
	}
	var got []string
	for _, tk := range st.TaskList() {
		got = append(got, tk.ID)
	}
	if want := []string{"t_d", "t_b", "t_c", "t_e", "t_a"}; !slices.Equal(got, want) {
		t.Fatalf("TaskList order %v, want %v (by creation, the same instant in another zone is a tie, ties by id)", got, want)
	}
}

func TestSpendString(t *testing.T) {
	for _, tc := range []struct {
		s           Spend
		long, short string
	}{
		{Spend{}, "none", "-"},
		{UnknownTurn, "unknown", "?"},
		{Spend{Input: 950, Output: 12_345, Turns: 1}, "950 in · 12.3k out", "13.3k"},
		{Spend{Input: 10, Output: 10, Cached: 4_560_000, Turns: 2, Unknown: 1}, "10 in · 10 out · 4.56M cached (+1 turn(s) unknown)", "4.56M+"},
		{Spend{Input: 1, Output: 2, CostUSD: 0.5, Turns: 2, Costed: 1}, "1 in · 2 out · ≥$0.5000", "3"},
		{Spend{Input: 1, Output: 2, CostUSD: 0.0123, Turns: 1, Costed: 1}, "1 in · 2 out · $0.0123", "3"},
	} {
		if got := tc.s.String(); got != tc.long {
			t.Errorf("%+v String = %q, want %q", tc.s, got, tc.long)
		}
		if got := tc.s.Short(); got != tc.short {
			t.Errorf("%+v Short = %q, want %q", tc.s, got, tc.short)
		}
	}
	var task Task
	task.AddTurnSpent(clock.Now(), "a", "", Spend{Input: 5, Output: 1, Turns: 1})
	task.AddTurnSpent(clock.Now(), "b", "", UnknownTurn)
	if want := (Spend{Input: 5, Output: 1, Turns: 1, Unknown: 1}); task.Spend != want || task.Turns[1].Spend != UnknownTurn {
		t.Errorf("task spend %+v, turns %+v; want %+v", task.Spend, task.Turns, want)
	}
}

func TestTreeSpend(t *testing.T) {
	tasks := []*Task{
		{ID: "t_root", Spend: Spend{Input: 1, Turns: 1}},
		{ID: "t_kid", Parent: "t_root", Spend: Spend{Output: 2, Turns: 1}},
		{ID: "t_grandkid", Parent: "t_kid", Spend: UnknownTurn, Live: Spend{Cached: 4}},
		{ID: "t_other", Spend: Spend{Input: 100, Turns: 1}},
		{ID: "t_loop1", Parent: "t_loop2"}, {ID: "t_loop2", Parent: "t_loop1"},
	}
	if got, n := TreeSpend(tasks, "t_root"); n != 3 || got != (Spend{Input: 1, Output: 2, Cached: 4, Turns: 2, Unknown: 1}) {
		t.Errorf("TreeSpend(t_root) = %+v over %d tasks", got, n)
	}
	if got, n := TreeSpend(tasks, "t_kid"); n != 2 || got != (Spend{Output: 2, Cached: 4, Turns: 1, Unknown: 1}) {
		t.Errorf("TreeSpend(t_kid) = %+v over %d tasks", got, n)
	}
	if _, n := TreeSpend(tasks, "t_loop1"); n != 2 {
		t.Errorf("TreeSpend over a parent loop counted %d tasks", n)
	}
	// A turn's end takes its whole spend in place of what was read of it
	// while it ran.
	kid := tasks[2]
	kid.EndLive(Spend{Cached: 5, Turns: 1})
	if kid.Live != (Spend{}) || kid.Spend != (Spend{Cached: 5, Turns: 1, Unknown: 1}) {
		t.Errorf("EndLive: spend %+v, live %+v", kid.Spend, kid.Live)
	}
	// One whose end has no record of it (interrupted) counts what was
	// read while it ran.
	kid.Live = Spend{Input: 7, CostUSD: 0.5}
	if got := kid.EndLive(UnknownTurn); got != (Spend{Input: 7, CostUSD: 0.5, Turns: 1, Costed: 1}) || kid.Spend.Input != 7 || kid.Live != (Spend{}) {
		t.Errorf("EndLive(unknown) after a live read = %+v, task %+v", got, kid.Spend)
	}
	if got := kid.EndLive(UnknownTurn); got != UnknownTurn {
		t.Errorf("EndLive(unknown) with nothing read = %+v", got)
	}
}
