package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/sshtest"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// BenchmarkRemoteDispatch measures `runner dispatch --host H DIR --agent
// sim "say hi"` through a real sshd on loopback (its own tmux server "on
// the host") against the same dispatch on this machine, interleaved in the
// same run (scripts/bench-remote.sh): the wall time of each, and the
// done latency after the final frame (from the last write to the pane's
// transcript where the pane runs, its mtime, to the "done" in the task's
// history). Targets (issue 16): wall ≤ 1.5× local, done latency ≤ 2×.
func BenchmarkRemoteDispatch(b *testing.B) {
	r := newBenchRig(b)
	srv := sshtest.Start(b)
	ctx := context.Background()
	n := envInt("RUNNER_BENCH_N", 10)
	rsock, there := filepath.Join(r.dir, "rs"), filepath.Join(r.dir, "there")
	if _, err := r.runner(ctx, "host", "add", "loop", sshtest.Alias, "--ssh-arg", "-F", "--ssh-arg", srv.Config,
		"--runner", r.bin, "--socket", rsock, "--dir", there); err != nil {
		b.Fatal(err)
	}
	rtc := tmuxctl.New(rsock)
	b.Cleanup(func() {
		_ = rtc.KillServer(context.Background())
		_, _ = r.runner(context.Background(), "host", "rm", "loop") // ends its shared connection
	})
	type run struct{ wall, latency, start, snapshot, ready, deliver, turn, exit time.Duration }
	dispatch := func(remote bool) run {
		args := []string{"dispatch", r.proj, "--agent", "sim", "--awareness", "off", "--json", "say hi"}
		if remote {
			args = append([]string{"dispatch", "--host", "loop"}, args[1:]...)
		}
		t0 := clock.Now()
		out, err := r.runner(ctx, args...)
		wall := clock.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		var t state.Task
		if err := json.Unmarshal([]byte(out), &t); err != nil {
			b.Fatalf("dispatch --json: %v: %s", err, out)
		}
		done, st := lastDone(&t, t0)
		if st != state.StatusDone {
			b.Fatalf("task %s ended %s", t.ID, t.Status)
		}
		transcript := t.Transcript
		tc := r.tc
		if remote {
			transcript, tc = filepath.Join(there, t.ID, "log"), rtc
		}
		fi, err := os.Stat(transcript)
		if err != nil {
			b.Fatal(err)
		}
		_ = tc.KillWindow(ctx, t.Tmux.Pane)
		at := map[state.Status]time.Time{}
		for _, h := range t.History {
			if _, ok := at[h.Status]; !ok {
				at[h.Status] = h.Time
			}
		}
		return run{wall: wall, latency: done.Sub(fi.ModTime()), start: at[state.StatusQueued].Sub(t0),
			snapshot: at[state.StatusStarting].Sub(at[state.StatusQueued]), ready: at[state.StatusReady].Sub(at[state.StatusStarting]),
			deliver: at[state.StatusRunning].Sub(at[state.StatusReady]), turn: done.Sub(at[state.StatusRunning]), exit: t0.Add(wall).Sub(done)}
	}
	dispatch(false) // warm-up: sessions, the shared connection, page cache
	dispatch(true)
	var lw, rw, ll, rl durations
	var lruns, rruns []run
	b.ResetTimer()
	for range n {
		l, rr := dispatch(false), dispatch(true)
		lw, ll = append(lw, l.wall), append(ll, l.latency)
		rw, rl = append(rw, rr.wall), append(rl, rr.latency)
		lruns, rruns = append(lruns, l), append(rruns, rr)
	}
	b.StopTimer()
	// One command over the shared connection, for the breakdown.
	var rtt durations
	for range 10 {
		t0 := clock.Now()
		if _, err := r.runner(ctx, "tmux", "--host", "loop", "--socket", rsock, "list"); err != nil {
			b.Fatal(err)
		}
		rtt = append(rtt, clock.Since(t0))
	}
	var local durations
	for range 10 {
		t0 := clock.Now()
		if _, err := r.runner(ctx, "tmux", "list"); err != nil {
			b.Fatal(err)
		}
		local = append(local, clock.Since(t0))
	}
	fmt.Printf("\n# dispatch of the sim on a host over loopback ssh vs on this machine, %d runs each, interleaved\n", n)
	fmt.Printf("# %-48s %8s %8s %8s %8s\n", "", "local", "host", "ratio", "target")
	fmt.Printf("# %-48s %6.0fms %6.0fms %7.2fx %8s\n", "dispatch wall (median)", ms(lw.q(0.5)), ms(rw.q(0.5)), float64(rw.q(0.5))/float64(lw.q(0.5)), "<=1.5x")
	fmt.Printf("# %-48s %6.0fms %6.0fms %7.2fx %8s\n", "done latency after the final frame (median)", ms(ll.q(0.5)), ms(rl.q(0.5)), float64(rl.q(0.5))/float64(ll.q(0.5)), "<=2x")
	fmt.Printf("# %-48s %6.0fms %6.0fms %7.2fx\n", "done latency (p90)", ms(ll.q(0.9)), ms(rl.q(0.9)), float64(rl.q(0.9))/float64(ll.q(0.9)))
	fmt.Printf("# %-48s %6.0fms %6.0fms\n", "runner tmux list (a round trip there)", ms(local.q(0.5)), ms(rtt.q(0.5)))
	part := func(name string, f func(run) time.Duration) {
		var l, r durations
		for i := range lruns {
			l, r = append(l, f(lruns[i])), append(r, f(rruns[i]))
		}
		fmt.Printf("# %-48s %6.0fms %6.0fms\n", name, ms(l.q(0.5)), ms(r.q(0.5)))
	}
	part("  process start → queued (checks there)", func(x run) time.Duration { return x.start })
	part("  queued → starting (git snapshot)", func(x run) time.Duration { return x.snapshot })
	part("  starting → ready (launch, sim start, detection)", func(x run) time.Duration { return x.ready })
	part("  ready → running (delivery)", func(x run) time.Duration { return x.deliver })
	part("  running → done (turn + detection)", func(x run) time.Duration { return x.turn })
	part("  done → process exit", func(x run) time.Duration { return x.exit })
	b.ReportMetric(float64(rw.q(0.5))/float64(lw.q(0.5)), "wall-ratio")
	b.ReportMetric(float64(rl.q(0.5))/float64(ll.q(0.5)), "latency-ratio")
}
