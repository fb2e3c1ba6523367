package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
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
// its window, and returns its wall time, its CPU time (the dispatch's and
// the processes it waited for: git, tmux clients) and the task as --json
// gave it.
func (r *benchRig) dispatchOnce(b *testing.B) (wall, cpu time.Duration, t *state.Task) {
	b.Helper()
	ctx := context.Background()
	cmd := exec.CommandContext(ctx, r.bin, "dispatch", r.proj, "--agent", "sim", "--awareness", "off", "--json", "say hi")
	cmd.Env, cmd.Dir = r.env, r.proj
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := clock.Now()
	err := cmd.Run()
	wall = clock.Since(t0)
	if err != nil {
		b.Fatalf("runner dispatch: %v: %s", err, errb.String())
	}
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	t = new(state.Task)
	if err := json.Unmarshal(out.Bytes(), t); err != nil {
		b.Fatalf("dispatch --json: %v: %s", err, out.String())
	}
	if t.Status != state.StatusDone {
		b.Fatalf("task %s ended %s", t.ID, t.Status)
	}
	_ = r.tc.KillWindow(ctx, t.Tmux.Pane)
	return wall, cpu, t
}

// busyCost is what a dispatch costs in a rig: the medians of its wall and
// CPU times.
type busyCost struct{ wall, cpu time.Duration }

// busyDispatch returns what a foreground dispatch costs in the rig plain
// and in the rig busy, whose state first gets n finished tasks
// (seedBusy), runs runs of each in turn, each rig's tmux server kept up
// all along.
func busyDispatch(b *testing.B, plain, busy *benchRig, n, runs int) (inPlain, inBusy busyCost) {
	ctx := context.Background()
	for _, r := range []*benchRig{plain, busy} {
		keep, err := r.tc.Launch(ctx, tmuxctl.WindowSpec{Session: "busy-keep", Argv: []string{"sleep", "3600"}})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = r.tc.KillWindow(ctx, keep) }()
	}
	_, _, tmpl := busy.dispatchOnce(b) // and the session, the page cache
	seedBusy(b, busy, tmpl, n)
	plain.dispatchOnce(b)
	busy.dispatchOnce(b)
	var pw, pc, bw, bc durations
	for range runs {
		w, c, _ := plain.dispatchOnce(b)
		pw, pc = append(pw, w), append(pc, c)
		w, c, _ = busy.dispatchOnce(b)
		bw, bc = append(bw, w), append(bc, c)
	}
	return busyCost{pw.q(0.5), pc.q(0.5)}, busyCost{bw.q(0.5), bc.q(0.5)}
}

// BenchmarkBusyDispatch reports a foreground dispatch's wall and CPU time
// with RUNNER_BENCH_SEED (500) finished tasks in the index (seedBusy)
// against the same in a rig with few, RUNNER_BENCH_N (8) of each in turn,
// for comparing binaries (RUNNER_BENCH_BIN) in one sitting.
func BenchmarkBusyDispatch(b *testing.B) {
	for range b.N {
		n := envInt("RUNNER_BENCH_SEED", 500)
		plain := newBenchRig(b)
		b.Setenv("RUNNER_BENCH_BIN", plain.bin)
		p, q := busyDispatch(b, plain, newBenchRig(b), n, envInt("RUNNER_BENCH_N", 8))
		fmt.Printf("busy: %d finished tasks: wall %.1fms, CPU %.1fms; few: wall %.1fms, CPU %.1fms (wall %.2fx, CPU %.2fx) (%s)\n",
			n, ms(q.wall), ms(q.cpu), ms(p.wall), ms(p.cpu), float64(q.wall)/float64(p.wall), float64(q.cpu)/float64(p.cpu), plain.bin)
		b.ReportMetric(float64(q.cpu)/float64(p.cpu), "cpu-ratio")
	}
}
