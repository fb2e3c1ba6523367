package supervisor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/state"
)

// TestWatchLive: while a turn runs, each new reading of what it used so
// far goes to the book (once per change), for status, ps and watch to
// show; with a budget in its tree it is read more often and judged.
func TestWatchLive(t *testing.T) {
	defer func(d, e time.Duration) { liveSpendEvery, liveShownEvery = d, e }(liveSpendEvery, liveShownEvery)
	liveSpendEvery, liveShownEvery = 100*time.Millisecond, 150*time.Millisecond
	for _, budgeted := range []bool{true, false} {
		s, _, b, w := newSupervisor(t, "sim", Settings{})
		b.budgeted = budgeted
		w.file = filepath.Join(t.TempDir(), "events.jsonl")
		earlier := `{"event":"Stop","data":{"hook_event_name":"Stop","usage":{"input_tokens":1,"output_tokens":1}}}` + "\n"
		if err := os.WriteFile(w.file, []byte(earlier), 0o600); err != nil {
			t.Fatal(err)
		}
		w.match.EventsFrom = int64(len(earlier))
		s.sig = "the task"
		stop := s.watchLive(context.Background(), func(error) {})
		f, err := os.OpenFile(w.file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.WriteString(`{"event":"Stop","data":{"hook_event_name":"Usage","usage":{"input_tokens":600,"output_tokens":5,"cost_usd":0.5}}}` + "\n")
		f.Close()
		want := state.Spend{Input: 600, Output: 5, CostUSD: 0.5}
		deadline := clock.Now().Add(3 * time.Second)
		for len(b.live.all()) == 0 && clock.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(2 * liveShownEvery) // a reading that did not change is not given again
		stop()
		got, judged := b.live.all(), b.live.judges()
		if len(got) != 1 || got[0] != want || judged[0] != budgeted {
			t.Errorf("budgeted %v: LiveSpend got %+v judged %v, want once %+v judged %v", budgeted, got, judged, want, budgeted)
		}
	}
}

// TestBudgetStopEndsTurn: a turn whose task a budget ended (recorded
// failed "budget: …", the agent interrupted) while its screen goes on
// reading as a turn (Cline's open tool line) ends budgetStopGrace later
// with the record's outcome, not at the task's --timeout; without a
// budget in the tree nothing ends it.
func TestBudgetStopEndsTurn(t *testing.T) {
	defer func(d, g time.Duration) { liveSpendEvery, budgetStopGrace = d, g }(liveSpendEvery, budgetStopGrace)
	liveSpendEvery, budgetStopGrace = 20*time.Millisecond, 50*time.Millisecond
	const why = "budget: 6 000 token(s) used in t_test, its --budget-tokens 5 000: no further turn"
	for _, budgeted := range []bool{true, false} {
		s, _, b, w := newSupervisor(t, "sim", Settings{}, step{monitor.GoalTurnEnd, monitor.Observation{}, errUntilDone})
		b.budgeted = budgeted
		b.task.Status = state.StatusFailed
		b.task.History = []state.StatusChange{{Status: state.StatusFailed, Reason: why}}
		w.file = filepath.Join(t.TempDir(), "events.jsonl")
		if err := os.WriteFile(w.file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		s.sig = "the task"
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		err := s.MonitorTurn(ctx, clock.Now())
		cancel()
		if !budgeted {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("no budget: %v, want the wait to go on until its context ends", err)
			}
			continue
		}
		var e *Ended
		if !errors.As(err, &e) || e.Status != state.StatusFailed || e.Reason != why {
			t.Errorf("budget stopped the task: %v, want the turn ended failed %q", err, why)
		}
	}
}
