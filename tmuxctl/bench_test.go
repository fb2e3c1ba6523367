package tmuxctl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/ctxtime"
)

// Benchmarks report ratios against a baseline measured in the same run: the
// machine is shared and noisy, so absolute times mean little.
//
//	go test ./tmuxctl -run '^$' -bench . -benchtime 1x
//	RUNNER_BENCH_WATCH=60s go test ./tmuxctl -run '^$' -bench QuietPanes -benchtime 1x

func benchServer(b *testing.B) *Client {
	b.Helper()
	dir, err := os.MkdirTemp("/tmp", "rbx")
	if err != nil {
		b.Fatal(err)
	}
	c := New(filepath.Join(dir, "s"), WithConfig("/dev/null"))
	b.Cleanup(func() {
		_ = c.KillServer(context.Background())
		os.RemoveAll(dir)
	})
	return c
}

// timeAlternating runs base and subject n times each, interleaved, and
// returns their median durations.
func timeAlternating(n int, base, subject func()) (time.Duration, time.Duration) {
	var tb, ts []time.Duration
	for range n {
		t0 := clock.Now()
		base()
		tb = append(tb, clock.Since(t0))
		t0 = clock.Now()
		subject()
		ts = append(ts, clock.Since(t0))
	}
	slices.Sort(tb)
	slices.Sort(ts)
	return tb[n/2], ts[n/2]
}

// BenchmarkCaptureAndSend compares capture and paste delivery with the
// cheapest tmux round trip (display-message -p) measured in the same run.
func BenchmarkCaptureAndSend(b *testing.B) {
	c := benchServer(b)
	ctx := context.Background()
	pane, err := c.Launch(ctx, WindowSpec{Session: "b", Size: Size{200, 50}, Argv: []string{"cat"}})
	if err != nil {
		b.Fatal(err)
	}
	noop := func() {
		if _, err := c.run(ctx, nil, "display-message", "-p", "-t", pane, "#{pane_id}"); err != nil {
			b.Fatal(err)
		}
	}
	const n = 100
	base, capt := timeAlternating(n, noop, func() {
		if _, err := c.CaptureScreen(ctx, pane); err != nil {
			b.Fatal(err)
		}
	})
	text := strings.Repeat("x", 200)
	_, paste := timeAlternating(n, noop, func() {
		if err := c.Paste(ctx, pane, text, false); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportMetric(float64(base.Microseconds()), "baseline-µs")
	b.ReportMetric(float64(capt)/float64(base), "capture-x")
	b.ReportMetric(float64(paste)/float64(base), "paste-x")
}

// BenchmarkIdleOverhead measures how long after the quiet window WaitIdle
// reports idle, from the pane program's own timestamp of its last output,
// against naive capture polling every 500 ms in the same run.
func BenchmarkIdleOverhead(b *testing.B) {
	c := benchServer(b)
	ctx := context.Background()
	dir := b.TempDir()
	if _, err := c.Launch(ctx, WindowSpec{Session: "keep", Argv: []string{"sleep", "600"}}); err != nil {
		b.Fatal(err)
	}
	quiet := 500 * time.Millisecond
	run := func(i int, naive bool) time.Duration {
		stamp := filepath.Join(dir, fmt.Sprintf("t%d-%v", i, naive))
		script := fmt.Sprintf(`sleep 0.1; for i in 1 2 3 4 5; do echo line $i; sleep 0.05; done; date +%%s%%N > %s; exec sleep 60`, ShellQuote(stamp))
		pane, err := c.Launch(ctx, WindowSpec{Session: "o", Argv: []string{"sh", "-c", script}})
		if err != nil {
			b.Fatal(err)
		}
		defer c.KillPane(ctx, pane)
		var end time.Time
		if naive {
			last, lastChange := "", clock.Now()
			for {
				s, err := c.CaptureScreen(ctx, pane)
				if err != nil {
					b.Fatal(err)
				}
				if s != last {
					last, lastChange = s, clock.Now()
				} else if clock.Since(lastChange) >= quiet {
					break
				}
				time.Sleep(500 * time.Millisecond)
			}
			end = clock.Now()
		} else {
			if _, err := c.WaitIdle(ctx, pane, IdleOptions{Quiet: quiet, AutoPipe: true}); err != nil {
				b.Fatal(err)
			}
			end = clock.Now()
		}
		raw, err := os.ReadFile(stamp)
		if err != nil {
			b.Fatal(err)
		}
		ns, _ := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		return end.Sub(time.Unix(0, ns)) - quiet
	}
	var ours, naive []time.Duration
	for i := range 7 {
		ours = append(ours, run(i, false))
		naive = append(naive, run(i, true))
	}
	slices.Sort(ours)
	slices.Sort(naive)
	b.ReportMetric(float64(ours[len(ours)/2].Milliseconds()), "overhead-ms")
	b.ReportMetric(float64(naive[len(naive)/2].Milliseconds()), "naive-overhead-ms")
}

// cpuTime returns the CPU time of this process and its reaped children
// (the tmux clients) plus the tmux server's own and its children's (the
// pipe-pane cats), from /proc.
func cpuTime(b *testing.B, serverPID int) time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	d := tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", serverPID))
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// Fields 14-17 (utime stime cutime cstime) are f[11..14] after the name.
	var ticks int64
	for _, x := range f[11:15] {
		v, _ := strconv.ParseInt(x, 10, 64)
		ticks += v
	}
	return d + time.Duration(ticks)*10*time.Millisecond // USER_HZ = 100
}

// BenchmarkQuietPanesCPU watches 50 quiet panes for RUNNER_BENCH_WATCH
// (default 60s) with WaitIdle, and the same panes with naive capture-pane
// polling every 0.5 s, and reports the CPU each used in all (runner and its
// tmux clients, the tmux server and its pipe-pane children), set-up included.
func BenchmarkQuietPanesCPU(b *testing.B) {
	watch := 60 * time.Second
	if v := os.Getenv("RUNNER_BENCH_WATCH"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		watch = d
	}
	c := benchServer(b)
	ctx := context.Background()
	var panes []string
	for i := range 50 {
		p, err := c.Launch(ctx, WindowSpec{Session: "q", Size: Size{120, 40}, Argv: []string{"sh", "-c", fmt.Sprintf("echo pane %d; exec sleep 3600", i)}})
		if err != nil {
			b.Fatal(err)
		}
		panes = append(panes, p)
	}
	out, err := c.run(ctx, nil, "display-message", "-p", "#{pid}")
	if err != nil {
		b.Fatal(err)
	}
	serverPID, _ := strconv.Atoi(strings.TrimSpace(out))
	time.Sleep(500 * time.Millisecond)

	measure := func(watchOne func(ctx context.Context, pane string)) time.Duration {
		before := cpuTime(b, serverPID)
		wctx, cancel := context.WithTimeout(ctx, watch)
		defer cancel()
		var wg sync.WaitGroup
		for _, p := range panes {
			wg.Add(1)
			go func() { defer wg.Done(); watchOne(wctx, p) }()
		}
		wg.Wait()
		return cpuTime(b, serverPID) - before
	}
	naive := measure(func(ctx context.Context, pane string) {
		for ctx.Err() == nil {
			_, _ = c.CaptureScreen(ctx, pane)
			_ = ctxtime.Sleep(ctx, 500*time.Millisecond)
		}
	})
	ours := measure(func(ctx context.Context, pane string) {
		_, err := c.WaitIdle(ctx, pane, IdleOptions{Quiet: 2 * watch, AutoPipe: true})
		if err == nil || ctx.Err() == nil {
			b.Errorf("wait on %s ended early: %v", pane, err)
		}
	})
	b.ReportMetric(naive.Seconds(), "naive-cpu-s")
	b.ReportMetric(ours.Seconds(), "ours-cpu-s")
	b.ReportMetric(float64(ours)/float64(naive), "ratio")
}
