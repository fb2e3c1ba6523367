package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/tmuxctl"
)

// BenchmarkQuietSupervisorsCPU measures what supervising quiet tasks costs
// while nothing happens: RUNNER_BENCH_TASKS (default 50) panes in the middle
// of a turn that shows busy and prints nothing, each watched by its own
// process (as each task has its own supervisor), for RUNNER_BENCH_WATCH
// (default 60s). The CPU of the watching processes and of the tmux server is
// read from /proc and reported per minute for three watchers, in the same
// run:
//   - naive: capture-pane every 0.5 s (the baseline);
//   - tick: the liveness poll the Monitor had (kill(pid, 0) and /proc every
//     2 s), the cost the pidfds remove;
//   - monitor: Monitor.Wait as the supervisor runs it.
//
// Run it through scripts/bench-tmux.sh.
// busyForever shows the sim's busy line for ever.
const busyForever = `printf '> task\n✻ Working… (esc to interrupt)\n'; exec sleep 600`

func BenchmarkQuietSupervisorsCPU(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux not installed")
	}
	n, watch := 50, 60*time.Second
	if v := os.Getenv("RUNNER_BENCH_TASKS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("RUNNER_BENCH_WATCH"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		watch = d
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("/tmp", "rbq")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	tc := tmuxctl.New(sock)
	defer func() { _ = tc.KillServer(ctx) }()
	type pane struct{ id, transcript string }
	var panes []pane
	for i := range n {
		tr := filepath.Join(dir, fmt.Sprintf("t%d", i))
		if err := os.WriteFile(tr, nil, 0o600); err != nil {
			b.Fatal(err)
		}
		p, err := tc.Launch(ctx, tmuxctl.WindowSpec{Session: "q", Size: tmuxctl.Size{Width: 100, Height: 30},
			Argv: []string{"sh", "-c", busyForever}, PipeTo: tr})
		if err != nil {
			b.Fatal(err)
		}
		panes = append(panes, pane{p, tr})
	}
	serverPID, err := tc.ServerPID(ctx)
	if err != nil {
		b.Fatal(err)
	}
	measure := func(mode string) float64 {
		var kids []*exec.Cmd
		for _, p := range panes {
			cmd := exec.Command(os.Args[0], "-test.run=^TestQuietWatcher$", "-test.timeout=0")
			cmd.Env = append(os.Environ(), "RUNNER_QUIET_MODE="+mode, "RUNNER_QUIET_SOCK="+sock,
				"RUNNER_QUIET_PANE="+p.id, "RUNNER_QUIET_TRANSCRIPT="+p.transcript)
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			kids = append(kids, cmd)
		}
		defer func() {
			for _, k := range kids {
				_ = k.Process.Kill()
				_ = k.Wait()
			}
		}()
		time.Sleep(3 * time.Second) // start-up and first capture are not idle
		cpu := func() time.Duration {
			d := procCPU(serverPID)
			for _, k := range kids {
				d += procCPU(k.Process.Pid)
			}
			return d
		}
		before := cpu()
		time.Sleep(watch)
		return (cpu() - before).Seconds() * float64(time.Minute) / float64(watch)
	}
	naive := measure("naive")
	tick := measure("tick")
	mon := measure("monitor")
	b.ReportMetric(naive, "naive-cpu-s/min")
	b.ReportMetric(tick, "tick2s-cpu-s/min")
	b.ReportMetric(mon, "monitor-cpu-s/min")
	b.ReportMetric(mon/naive, "monitor/naive")
	b.ReportMetric(tick/naive, "tick2s/naive")
}

// procCPU is the user and system time process pid has used (/proc).
func procCPU(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	var ticks int64
	for _, x := range f[11:13] { // utime, stime
		v, _ := strconv.ParseInt(x, 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ = 100
}

// TestQuietWatcher is the watching process of BenchmarkQuietSupervisorsCPU
// (skipped unless the benchmark starts it): it watches one pane until it
// is killed.
func TestQuietWatcher(t *testing.T) {
	mode := os.Getenv("RUNNER_QUIET_MODE")
	if mode == "" {
		t.Skip("a helper process of BenchmarkQuietSupervisorsCPU")
	}
	ctx := context.Background()
	tc := tmuxctl.New(os.Getenv("RUNNER_QUIET_SOCK"))
	pane := os.Getenv("RUNNER_QUIET_PANE")
	switch mode {
	case "naive":
		for {
			_, _ = tc.CaptureScreen(ctx, pane)
			time.Sleep(500 * time.Millisecond)
		}
	case "tick":
		serverPID, _ := tc.ServerPID(ctx)
		info, _, _ := tc.PaneScreen(ctx, pane)
		for range time.Tick(2 * time.Second) {
			if !proctree.Alive(serverPID) || !proctree.Alive(info.PID) {
				t.Fatal("gone")
			}
		}
	case "monitor":
		sim, _ := profile.BuiltinProfile("sim")
		m := &monitor.Monitor{TC: tc, Pane: pane, Profile: sim, Transcript: os.Getenv("RUNNER_QUIET_TRANSCRIPT")}
		obs, err := m.Wait(ctx, monitor.GoalTurnEnd, clock.Now())
		t.Fatalf("wait ended: %+v %v", obs, err)
	}
}
