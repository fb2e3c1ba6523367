package taskbook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/budget"
	"github.com/runner-cli/runner/runner/changes"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/runner/supervisor"
	"github.com/runner-cli/runner/state"
)

// book is a Book of task id in store, which tells and stops nothing.
func book(t *testing.T, store *state.Store, id string) *Book {
	prof, _ := profile.BuiltinProfile("sim")
	return &Book{ID: id, Profile: prof, Record: record.Book{Store: store, Now: clock.Now}, Log: t.Logf,
		Tell: func(context.Context, *state.Task) {},
		Git:  func(ctx context.Context, _ *state.Task) (context.Context, error) { return ctx, nil },
		Look: func(context.Context, string) (*changes.Look, error) { return nil, context.Canceled },
		StopForBudget: func(_ context.Context, stops []budget.Stop) {
			if len(stops) > 0 {
				t.Errorf("stopped for a budget no task has: %v", stops)
			}
		}}
}

// TestEndTurn: a turn that ends done with a message waiting makes the task
// ready for it (more 1, no final task); one without ends done with its
// answer; a task cancelled meanwhile stays cancelled, its turn's spend
// counted.
func TestEndTurn(t *testing.T) {
	ctx := t.Context()
	store := statetest.WithTasks(t, statetest.Supervised("t_aaaaaaaa", "", state.StatusRunning),
		statetest.Supervised("t_bbbbbbbb", "", state.StatusRunning), statetest.Supervised("t_cccccccc", "", state.StatusCancelled))
	if err := store.Update(ctx, func(st *state.State) error {
		st.AddMessage(&state.Message{ID: "m_aaaaaaaa", From: state.SenderUser, To: "t_aaaaaaaa", Type: "info", Text: "more", Status: state.MessagePending, Created: clock.Now()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	done := supervisor.Outcome{Status: state.StatusDone, Reason: "turn ended"}
	tt := supervisor.TurnText{Answer: "42", Spend: state.Spend{Input: 10, Turns: 1}}

	if more, final := book(t, store, "t_aaaaaaaa").EndTurn(ctx, done, tt, true); more != 1 || final != nil {
		t.Errorf("a message waiting: more %d, final %v; want 1, nil", more, final)
	}
	if st := statetest.Read(t, store); st.Task("t_aaaaaaaa").Status != state.StatusReady {
		t.Errorf("a message waiting: %s, want ready", st.Task("t_aaaaaaaa").Status)
	}
	more, final := book(t, store, "t_bbbbbbbb").EndTurn(ctx, done, tt, true)
	if more != 0 || final == nil || final.Status != state.StatusDone || final.Answer != "42" {
		t.Errorf("no message: more %d, final %+v; want done with answer 42", more, final)
	}
	if _, final := book(t, store, "t_cccccccc").EndTurn(ctx, done, tt, true); final != nil {
		t.Errorf("a cancelled task's turn ended %s", final.Status)
	}
	if c := statetest.Read(t, store).Task("t_cccccccc"); c.Status != state.StatusCancelled || c.Spend.Input != 10 {
		t.Errorf("cancelled task: %s, spend %+v; want cancelled with the turn's 10 input tokens", c.Status, c.Spend)
	}
}

// TestEndTurnLetsGo: the update that records a task's end lets go of it:
// the project lock is free before the end can be read (Free runs while the
// record still says running), and the record has no supervisor. A turn
// that goes on (a message waiting) keeps both. Without it, `runner wait X
// && runner dispatch --exclusive` met the lock still held, and `&& runner
// resume X` a supervisor still alive.
func TestEndTurnLetsGo(t *testing.T) {
	ctx := t.Context()
	store := statetest.WithTasks(t, statetest.Supervised("t_aaaaaaaa", "", state.StatusRunning),
		statetest.Supervised("t_bbbbbbbb", "", state.StatusRunning), statetest.Supervised("t_cccccccc", "", state.StatusCancelled))
	if err := store.Update(ctx, func(st *state.State) error {
		st.AddMessage(&state.Message{ID: "m_aaaaaaaa", From: state.SenderUser, To: "t_aaaaaaaa", Type: "info", Text: "more", Status: state.MessagePending, Created: clock.Now()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	done := supervisor.Outcome{Status: state.StatusDone, Reason: "turn ended"}
	for _, tc := range []struct {
		id, why string
		o       supervisor.Outcome
		free    bool
	}{
		{"t_aaaaaaaa", "a message waiting: the next turn", done, false},
		{"t_bbbbbbbb", "done", done, true},
		{"t_cccccccc", "cancelled by another process meanwhile", done, true},
	} {
		b := book(t, store, tc.id)
		freed := 0
		b.Free = func() {
			freed++
			// Read from disk, past this update's lock: the end is not
			// visible yet.
			if x, err := store.ReadTask(context.WithoutCancel(ctx), tc.id); err != nil || x.Status == state.StatusDone {
				t.Errorf("%s: the lock let go of after the end was recorded (%v)", tc.why, err)
			}
		}
		b.EndTurn(ctx, tc.o, supervisor.TurnText{Answer: "42"}, true)
		x := statetest.Read(t, store).Task(tc.id)
		if tc.free && (freed != 1 || x.SupervisorPID != 0) {
			t.Errorf("%s: freed %d times, supervisor %d; want freed once, none", tc.why, freed, x.SupervisorPID)
		}
		if !tc.free && (freed != 0 || x.SupervisorPID == 0) {
			t.Errorf("%s: freed %d times, supervisor %d; want the lock and the task kept", tc.why, freed, x.SupervisorPID)
		}
	}
}

// TestImports: the task's record, the decisions below, and none of
// package runner.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "gitsnap", "internal/clock", "runner/budget", "runner/changes", "runner/messaging", "runner/notice",
		"runner/profile", "runner/reconcile", "runner/record", "runner/settings", "runner/supervisor", "state")
}

// TestPromptCountsTheTurn: the turn is counted in the update that checks
// the budget, before anything is pasted, so what the turn does at once (a
// child it dispatches, checked against the same tree) sees it: a parent
// with --max-turns 2 whose second turn dispatches a child leaves the child
// no turn. Counted at the delivery's confirmation instead, the child's
// first turn ran as the tree's third (budget_turns.txtar under load).
func TestPromptCountsTheTurn(t *testing.T) {
	ctx := t.Context()
	parent := statetest.Supervised("t_aaaaaaaa", "", state.StatusRunning)
	parent.Settings = []byte(`{"max_turns": 2}`)
	child := statetest.Supervised("t_bbbbbbbb", "", state.StatusStarting)
	child.Parent = parent.ID
	store := statetest.WithTasks(t, parent, child)
	for turn := 1; turn <= 2; turn++ {
		if _, _, err := book(t, store, parent.ID).Prompt(ctx, "say hi", turn == 1, nil); err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if n := statetest.Read(t, store).Task(parent.ID).TurnCount; n != turn {
			t.Fatalf("after Prompt of turn %d: %d turn(s) recorded, want %d before the paste", turn, n, turn)
		}
	}
	// The child's ready status, found before, comes with the prompt's
	// write: recorded even when the budget allows no turn.
	found := clock.Now().Add(-time.Second).UTC().Truncate(time.Millisecond)
	_, _, err := book(t, store, child.ID).Prompt(ctx, "say child", true, &supervisor.Ready{Reason: "the agent is ready (box)", At: found})
	var ended *supervisor.Ended
	if !errors.As(err, &ended) || ended.Status != state.StatusFailed || !strings.Contains(ended.Reason, "--max-turns 2") {
		t.Fatalf("the child's first turn: %v, want the tree's budget spent", err)
	}
	x := statetest.Read(t, store).Task(child.ID)
	if n := x.TurnCount; n != 0 {
		t.Errorf("a turn refused by the budget was counted: %d", n)
	}
	if h := x.History[len(x.History)-1]; x.Status != state.StatusReady || h.Status != state.StatusReady || !h.Time.Equal(found) || h.Reason != "the agent is ready (box)" {
		t.Errorf("the ready status given to Prompt: %s, last in its history %+v; want ready, found at %v", x.Status, h, found)
	}
}

// TestPromptRecordsTheStart: a ready status that carries the record of
// the task starting (Ready.Start) has it written first, in the same write
// as the ready status and the turn, and says so (Recorded); a start that
// cannot be recorded writes nothing.
func TestPromptRecordsTheStart(t *testing.T) {
	ctx := t.Context()
	task := statetest.Supervised("t_cccccccc", "", state.StatusQueued)
	store := statetest.WithTasks(t, task)
	recorded := 0
	start := func(x *state.Task) error {
		x.SnapshotRef = "refs/runner/snapshots/" + x.ID
		return x.SetStatus(state.StatusStarting, clock.Now(), "snapshot; pane %1")
	}
	ready := &supervisor.Ready{Reason: "the agent is ready (box)", At: clock.Now().Add(-time.Second), Start: start, Recorded: func() { recorded++ }}
	if _, _, err := book(t, store, task.ID).Prompt(ctx, "say hi", true, ready); err != nil {
		t.Fatal(err)
	}
	x := statetest.Read(t, store).Task(task.ID)
	n := len(x.History)
	if recorded != 1 || x.TurnCount != 1 || x.SnapshotRef == "" || n < 2 || x.History[n-2].Status != state.StatusStarting ||
		x.History[n-1].Status != state.StatusReady || x.History[n-1].Time.Before(x.History[n-2].Time) {
		t.Fatalf("recorded %d times, %d turn(s), snapshot %q, history %+v; want the start, then ready, then the turn, once", recorded, x.TurnCount, x.SnapshotRef, x.History)
	}

	other := statetest.Supervised("t_dddddddd", "", state.StatusQueued)
	store = statetest.WithTasks(t, other)
	refused := errors.New("left the queue")
	ready = &supervisor.Ready{Reason: "ready", At: clock.Now(), Start: func(*state.Task) error { return refused }, Recorded: func() { recorded++ }}
	if _, _, err := book(t, store, other.ID).Prompt(ctx, "say hi", true, ready); !errors.Is(err, refused) || recorded != 1 {
		t.Fatalf("Prompt: %v, recorded %d times; want the start's error, nothing recorded", err, recorded)
	}
	if x := statetest.Read(t, store).Task(other.ID); x.Status != state.StatusQueued || x.TurnCount != 0 {
		t.Errorf("recorded %s with %d turn(s), want nothing written", x.Status, x.TurnCount)
	}
}

// TestPromptAndEndReadTheirTasksOnly: the writes of a turn's delivery and
// of its end read the records of the tasks they need (the task, its tree
// for the budget, the tasks the awareness block shows), not every task's
// in the index: with the records of a day's other finished tasks gone
// from the disk (a full load fails then), the prompt and the end are
// recorded all the same, the block shows a sibling whole (its first line
// past the index's title, its latest turn) and another task at work in
// the project too, and the tree's turns counted
// against the parent's --max-turns include the sibling's, which only its
// record holds.
func TestPromptAndEndReadTheirTasksOnly(t *testing.T) {
	ctx := t.Context()
	parent := statetest.Supervised("t_parent00", "", state.StatusRunning)
	parent.Settings = []byte(`{"max_turns": 5}`)
	parent.TurnCount = 2
	sib := statetest.Supervised("t_sibling0", parent.ID, state.StatusRunning)
	sib.Text = "the sibling's task, a first line well past the sixty bytes an index entry keeps of it: " + strings.Repeat("x", 8) + "\nmore"
	sib.TurnCount = 2
	sib.AddTurnSpent(clock.Now(), "it added the health endpoint", "", state.Spend{})
	self := statetest.Supervised("t_selftask", parent.ID, state.StatusStarting)
	// Another task at work in the project, outside the tree: only the
	// block reads its record.
	near := statetest.Supervised("t_neighbor", "", state.StatusRunning)
	near.Text = "the neighbour's task, whose first line is also longer than what the index keeps of a title " + strings.Repeat("y", 6)
	near.AddTurnSpent(clock.Now(), "it renamed the config loader", "", state.Spend{})
	tasks := []*state.Task{parent, sib, self, near}
	for i := range 50 {
		x := statetest.Supervised(fmt.Sprintf("t_other%03d", i), "", state.StatusDone)
		x.Text = "an earlier task"
		tasks = append(tasks, x)
	}
	made := statetest.WithTasks(t, tasks...)
	for i := range 50 {
		gone, _ := filepath.Glob(filepath.Join(made.Dir(), "tasks", fmt.Sprintf("t_other%03d.*.json", i)))
		for _, f := range gone {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A copy, which this process has read no record of.
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.CopyFS(dir, os.DirFS(made.Dir())); err != nil {
		t.Fatal(err)
	}
	store, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Read(ctx); !errors.Is(err, state.ErrCorrupt) {
		t.Fatalf("a full read with the other records gone: %v, want it to fail (the test proves nothing else)", err)
	}

	b := book(t, store, self.ID)
	var text string
	text, _, err = b.Prompt(ctx, "say hi", true, &supervisor.Ready{Reason: "the agent is ready (box)", At: clock.Now()})
	if err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if first := strings.SplitN(sib.Text, "\n", 2)[0]; !strings.Contains(text, first) || !strings.Contains(text, "latest: it added the health endpoint") {
		t.Errorf("the awareness block does not show the sibling whole:\n%s", text)
	}
	if !strings.Contains(text, near.Text) || !strings.Contains(text, "latest: it renamed the config loader") {
		t.Errorf("the awareness block does not show the other task at work whole:\n%s", text)
	}
	if x, err := store.ReadTask(ctx, self.ID); err != nil || x.TurnCount != 1 || x.Status != state.StatusReady {
		t.Fatalf("after Prompt: %+v, %v; want ready with its turn counted", x, err)
	}
	// 2 (parent) + 2 (sibling) + 1: the tree's fifth turn is refused.
	_, _, err = b.Prompt(ctx, "again", false, nil)
	var ended *supervisor.Ended
	if !errors.As(err, &ended) || !strings.Contains(ended.Reason, "5 turn(s) delivered in the tree of task t_parent00") {
		t.Fatalf("the tree's sixth turn: %v, want it refused by the parent's --max-turns 5", err)
	}

	more, final := b.EndTurn(ctx, supervisor.Outcome{Status: state.StatusDone, Reason: "turn ended"}, supervisor.TurnText{Answer: "hi"}, true)
	if more != 0 || final == nil || final.Status != state.StatusDone {
		t.Fatalf("EndTurn: more %d, final %+v; want done", more, final)
	}
	if x, err := store.ReadTask(ctx, self.ID); err != nil || x.Status != state.StatusDone || x.Answer != "hi" {
		t.Fatalf("after EndTurn: %+v, %v; want done with its answer", x, err)
	}
}

// TestEndTurnCountsTheTreeLiveSpend: the end of a turn, which reads only
// the records it needs, reads those of the budget's tree: what a
// sibling's running turn used so far (Task.Live, in its record only)
// counts toward the parent's --budget-tokens, and the tree's turns at
// work are stopped.
func TestEndTurnCountsTheTreeLiveSpend(t *testing.T) {
	ctx := t.Context()
	parent := statetest.Supervised("t_parent00", "", state.StatusRunning)
	parent.Settings = []byte(`{"budget_tokens": 1000}`)
	sib := statetest.Supervised("t_sibling0", parent.ID, state.StatusRunning)
	sib.Live = state.Spend{Input: 900}
	self := statetest.Supervised("t_selftask", parent.ID, state.StatusRunning)
	store := statetest.WithTasks(t, parent, sib, self)
	b := book(t, store, self.ID)
	var stopped []string
	b.StopForBudget = func(_ context.Context, stops []budget.Stop) {
		for _, s := range stops {
			stopped = append(stopped, s.Task.ID)
		}
	}
	_, final := b.EndTurn(ctx, supervisor.Outcome{Status: state.StatusDone, Reason: "turn ended"},
		supervisor.TurnText{Answer: "hi", Spend: state.Spend{Input: 200, Turns: 1}}, true)
	if final == nil || final.Status != state.StatusFailed || !strings.Contains(final.LastReason(), "--budget-tokens 1000") {
		t.Fatalf("the turn that took the tree to 1100 tokens ended %+v, want failed on the parent's budget", final)
	}
	slices.Sort(stopped)
	if !slices.Equal(stopped, []string{parent.ID, sib.ID}) {
		t.Errorf("stopped %v, want the tree's turns at work: the parent's and the sibling's", stopped)
	}
}
