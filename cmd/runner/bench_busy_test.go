package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// A user's state directory is not empty when they dispatch: the index
// carries every finished task whose window is still open (the background
// gc closes it close_after, 2 hours by default, after the task ended; the
// index then keeps state.DefaultArchiveAfter of them and archives the
// rest), each with its record. After a busy two hours of fan-outs that is
// hundreds. A dispatch that reads every record, or decodes the whole
// index more often than it must, costs nothing in a rig that starts empty
// and grows with the day for its users. These helpers give a rig such a
// state (RUNNER_BENCH_SEED for BenchmarkDispatchOverhead and
// BenchmarkHookToDone, and the gate's busy check).

// seedBusy adds to the rig's state n tasks finished over the last 100
// minutes (their windows not due for closing yet, so no background gc
// starts), each a copy of tmpl (a real dispatch's task, so its record has what a
// real one has: history, turns, spend, changes, tmux target) with its own
// id, text and times, its pane long gone.
func seedBusy(b *testing.B, r *benchRig, tmpl *state.Task, n int) {
	b.Helper()
	raw, err := json.Marshal(tmpl)
	if err != nil {
		b.Fatal(err)
	}
	st, err := state.Open(r.stateDir)
	if err != nil {
		b.Fatal(err)
	}
	now := clock.Now()
	err = st.Update(context.Background(), func(s *state.State) error {
		for i := range n {
			var t state.Task
			if err := json.Unmarshal(raw, &t); err != nil {
				return err
			}
			t.ID = fmt.Sprintf("t_busy%04d", i)
			shiftTimes(&t, now.Add(-100*time.Minute+time.Duration(i)*100*time.Minute/time.Duration(n)).Sub(t.Created))
			t.Text = fmt.Sprintf("task %d of the fan-out: add the endpoint and its tests, then say what changed", i)
			t.SupervisorPID, t.SupervisorStart = 0, ""
			t.Tmux.Window, t.Tmux.Pane = t.ID, fmt.Sprintf("%%%d", 100000+i)
			s.Tasks[t.ID] = &t
		}
		return nil
	})
	if err != nil {
		b.Fatalf("seed the rig's state with %d finished tasks: %v", n, err)
	}
}

// shiftTimes moves every time of t by d.
func shiftTimes(t *state.Task, d time.Duration) {
	for _, at := range []*time.Time{&t.Created, &t.Started, &t.Ended, &t.Reclaimed} {
		if !at.IsZero() {
			*at = at.Add(d)
		}
	}
	for i := range t.History {
		t.History[i].Time = t.History[i].Time.Add(d)
	}
	for i := range t.Turns {
		t.Turns[i].Time = t.Turns[i].Time.Add(d)
	}
}

// dispatchOnce runs one foreground `say hi` dispatch in the rig, closes
// its window, and returns its wall time and the task as --json gave it.
func (r *benchRig) dispatchOnce(b *testing.B) (time.Duration, *state.Task) {
	b.Helper()
	ctx := context.Background()
	t0 := clock.Now()
	out, err := r.runner(ctx, "dispatch", r.proj, "--agent", "sim", "--awareness", "off", "--json", "say hi")
	wall := clock.Since(t0)
	if err != nil {
		b.Fatal(err)
	}
	var t state.Task
	if err := json.Unmarshal([]byte(out), &t); err != nil {
		b.Fatalf("dispatch --json: %v: %s", err, out)
	}
	if t.Status != state.StatusDone {
		b.Fatalf("task %s ended %s", t.ID, t.Status)
	}
	_ = r.tc.KillWindow(ctx, t.Tmux.Pane)
	return wall, &t
}

// busyDispatch returns the median wall times of a foreground dispatch in
// the rig plain and in the rig busy, whose state first gets n finished
// tasks (seedBusy), runs runs of each in turn, each rig's tmux
// server kept up all along.
func busyDispatch(b *testing.B, plain, busy *benchRig, n, runs int) (inPlain, inBusy time.Duration) {
	ctx := context.Background()
	for _, r := range []*benchRig{plain, busy} {
		keep, err := r.tc.Launch(ctx, tmuxctl.WindowSpec{Session: "busy-keep", Argv: []string{"sleep", "3600"}})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = r.tc.KillWindow(ctx, keep) }()
	}
	_, tmpl := busy.dispatchOnce(b) // and the session, the page cache
	seedBusy(b, busy, tmpl, n)
	plain.dispatchOnce(b)
	busy.dispatchOnce(b)
	var p, q durations
	for range runs {
		w, _ := plain.dispatchOnce(b)
		p = append(p, w)
		w, _ = busy.dispatchOnce(b)
		q = append(q, w)
	}
	return p.q(0.5), q.q(0.5)
}

// BenchmarkBusyDispatch reports a foreground dispatch's wall time with
// RUNNER_BENCH_SEED (500) finished tasks in the index (seedBusy) against the same in
// a rig with few, RUNNER_BENCH_N (8) of each in turn, for comparing
// binaries (RUNNER_BENCH_BIN) in one sitting.
func BenchmarkBusyDispatch(b *testing.B) {
	for range b.N {
		n := envInt("RUNNER_BENCH_SEED", 500)
		plain := newBenchRig(b)
		b.Setenv("RUNNER_BENCH_BIN", plain.bin)
		inPlain, inBusy := busyDispatch(b, plain, newBenchRig(b), n, envInt("RUNNER_BENCH_N", 8))
		fmt.Printf("busy: %d finished tasks %.1fms, few %.1fms (%.2fx) (%s)\n", n, ms(inBusy), ms(inPlain), float64(inBusy)/float64(inPlain), plain.bin)
		b.ReportMetric(float64(inBusy)/float64(inPlain), "ratio")
	}
}
