//go:build linux

// Command benchwatch (Linux only: it reads /proc) measures `runner watch` (issue 15) against the
// naive live view: N idle tasks on the sim, then for SECONDS each
//   - watch: `runner watch` in a 160x48 terminal (a pane of a second tmux
//     server), CPU of the watch process and the tmux calls it makes
//     (its reaped children) plus runner's tmux server;
//   - poll: what a TUI that refreshes every 2 s by capturing every pane
//     does (agent-deck's way): one list-panes and N capture-pane per tick,
//     CPU of this process's tmux children plus runner's tmux server;
//
// (the view measured twice: while the tasks are under a minute old and
// their ages change every second, then once they are all older), and the latency from a durable state write (a probe task recorded with
// state.Store.Update) to the terminal showing it, over 10 probes.
// Run it through scripts/bench-watch.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

func main() {
	bin := flag.String("runner", "runner", "the runner binary")
	tasks := flag.Int("tasks", 50, "idle tasks")
	seconds := flag.Int("seconds", 60, "seconds measured for each of watch and poll")
	flag.Parse()
	if err := run(*bin, *tasks, time.Duration(*seconds)*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "benchwatch:", err)
		os.Exit(1)
	}
}

// bench is one run: a private runner state, its tmux server (rc) and the
// "terminal" server the view runs in (tc).
type bench struct {
	bin, proj string
	env       []string
	rc, tc    *tmuxctl.Client
	span      time.Duration
}

func run(bin string, n int, span time.Duration) error {
	ctx := context.Background()
	work, err := os.MkdirTemp("/tmp", "rbw")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	home := filepath.Join(work, "home")
	b := &bench{bin: bin, proj: filepath.Join(home, "proj"), span: span,
		env: []string{"HOME=" + home, "XDG_STATE_HOME=" + home + "/.local/state", "XDG_CONFIG_HOME=" + home + "/.config",
			"RUNNER_TMUX_SOCKET=" + filepath.Join(work, "s"), "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color",
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"},
		rc: tmuxctl.New(filepath.Join(work, "s")), tc: tmuxctl.New(filepath.Join(work, "t"))}
	defer b.rc.KillServer(ctx)
	defer b.tc.KillServer(ctx)
	lastStart, panes, err := b.startTasks(ctx, n)
	if err != nil {
		return err
	}
	serverPID, err := b.rc.ServerPID(ctx)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second)

	young, settled, err := b.measureWatch(ctx, n, serverPID, lastStart)
	if err != nil {
		return err
	}
	lat, err := b.latency(ctx, filepath.Join(home, ".local/state/runner"))
	if err != nil {
		return err
	}
	_ = b.tc.KillServer(ctx)
	time.Sleep(2 * time.Second)
	pollCPU, pollSrv, err := b.measurePoll(ctx, serverPID)
	if err != nil {
		return err
	}

	perMin := func(d time.Duration) float64 { return d.Seconds() * 60 / span.Seconds() }
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	wt, yt, pt := perMin(settled[0]+settled[1]), perMin(young[0]+young[1]), perMin(pollCPU+pollSrv)
	fmt.Printf("%d idle tasks, %s each:\n", panes, span)
	fmt.Printf("  runner watch, tasks > 1 min old:   %.3f CPU-s/min (watch %.3f + tmux server %.3f)  target <= 0.3\n", wt, perMin(settled[0]), perMin(settled[1]))
	fmt.Printf("  runner watch, tasks < 1 min old:   %.3f CPU-s/min (watch %.3f + tmux server %.3f)\n", yt, perMin(young[0]), perMin(young[1]))
	fmt.Printf("  2 s pane polling:                  %.3f CPU-s/min (poller+tmux clients %.3f + tmux server %.3f)\n", pt, perMin(pollCPU), perMin(pollSrv))
	fmt.Printf("  ratio watch/polling: %.2fx (tasks > 1 min), %.2fx (< 1 min)\n", wt/pt, yt/pt)
	fmt.Printf("  state write -> on screen: median %s, max %s over %d probes (target <= 100ms; includes ~5 ms capture polling)\n",
		lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond), len(lat))
	return nil
}

// runner runs the runner binary in the bench's environment.
func (b *bench) runner(args ...string) error {
	cmd := exec.Command(b.bin, args...)
	cmd.Env, cmd.Dir = b.env, b.proj
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("runner %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// startTasks dispatches n sim tasks, each done and idle at its prompt
// after, and returns when the last started and how many panes there are.
func (b *bench) startTasks(ctx context.Context, n int) (lastStart time.Time, panes int, err error) {
	if err := os.MkdirAll(b.proj, 0o755); err != nil {
		return lastStart, 0, err
	}
	if err := b.runner("project", "add", "bench", b.proj); err != nil {
		return lastStart, 0, err
	}
	fmt.Printf("starting %d idle tasks…\n", n)
	for i := range n {
		lastStart = clock.Now()
		if err := b.runner("dispatch", "bench", "--agent", "sim", fmt.Sprintf("write f%d.txt x", i)); err != nil {
			return lastStart, 0, err
		}
	}
	list, err := b.rc.ListPanes(ctx)
	fmt.Printf("%d panes idle at their prompt\n", len(list))
	return lastStart, len(list), err
}

// measureWatch starts `runner watch` in a 160x48 terminal and measures
// its CPU (with its reaped children) and the runner tmux server's for a
// span twice: while the tasks are young, then once all are older than a
// minute. Each result is {watch, server}.
func (b *bench) measureWatch(ctx context.Context, n, serverPID int, lastStart time.Time) (young, settled [2]time.Duration, err error) {
	argv := []string{"new-session", "-d", "-s", "term", "-x", "160", "-y", "48"}
	for _, kv := range b.env {
		argv = append(argv, "-e", kv)
	}
	argv = append(argv, "exec "+tmuxctl.ShellQuote(b.bin)+" watch")
	if _, err := b.tc.Command(ctx, argv...); err != nil {
		return young, settled, err
	}
	out, err := b.tc.Command(ctx, "display-message", "-p", "-t", "term", "#{pane_pid}")
	if err != nil {
		return young, settled, err
	}
	watchPID, _ := strconv.Atoi(strings.TrimSpace(out))
	if err := waitScreen(b.tc, fmt.Sprintf("✓ %d done", n), 20*time.Second); err != nil {
		return young, settled, err
	}
	time.Sleep(5 * time.Second) // the first captures and the reconcile
	measure := func() [2]time.Duration {
		w0, s0 := cpu(watchPID, true), cpu(serverPID, false)
		time.Sleep(b.span)
		return [2]time.Duration{cpu(watchPID, true) - w0, cpu(serverPID, false) - s0}
	}
	young = measure() // tasks that finished in the last minute
	if wait := clock.Until(lastStart.Add(65 * time.Second)); wait > 0 {
		time.Sleep(wait)
	}
	return young, measure(), nil
}

// latency records 10 probe tasks durably, one at a time, and times each
// until the terminal shows it.
func (b *bench) latency(ctx context.Context, stateDir string) ([]time.Duration, error) {
	store, err := state.Open(stateDir)
	if err != nil {
		return nil, err
	}
	var lat []time.Duration
	for i := range 10 {
		text := fmt.Sprintf("latency probe %d", i)
		err := store.Update(ctx, func(st *state.State) error {
			id := st.NewTaskID()
			now := clock.Now().UTC()
			st.Tasks[id] = &state.Task{ID: id, Project: "bench", Dir: b.proj, Agent: "sim", Text: text,
				Status: state.StatusDone, Created: now, Ended: now,
				History: []state.StatusChange{{Status: state.StatusDone, Time: now}}}
			return nil
		})
		if err != nil {
			return nil, err
		}
		t0 := clock.Now()
		if err := waitScreen(b.tc, text, 10*time.Second); err != nil {
			return nil, err
		}
		lat = append(lat, clock.Since(t0))
		time.Sleep(300 * time.Millisecond)
	}
	return lat, nil
}

// measurePoll does what a TUI that refreshes every 2 s does (one
// list-panes and a capture of every pane per tick) for a span, and
// returns its CPU (with its tmux clients) and the tmux server's.
func (b *bench) measurePoll(ctx context.Context, serverPID int) (poller, server time.Duration, err error) {
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru0)
	p0, q0 := selfCPU(), cpu(serverPID, false)
	for end := clock.Now().Add(b.span); clock.Now().Before(end); {
		tick := clock.Now()
		list, err := b.rc.ListPanes(ctx)
		if err != nil {
			return 0, 0, err
		}
		for _, p := range list {
			if _, err := b.rc.Capture(ctx, p.ID, tmuxctl.CaptureOptions{Escapes: true}); err != nil {
				return 0, 0, err
			}
		}
		time.Sleep(2*time.Second - clock.Since(tick))
	}
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru1)
	poller = selfCPU() - p0 + tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)
	return poller, cpu(serverPID, false) - q0, nil
}

// cpu returns the CPU time of pid (with its reaped children when
// children is set) from /proc.
func cpu(pid int, children bool) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// fields after the command: state is f[0]; utime f[11], stime f[12], cutime f[13], cstime f[14]
	var ticks int64
	last := 12
	if children {
		last = 14
	}
	for i := 11; i <= last; i++ {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return tv(ru.Utime) + tv(ru.Stime)
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}

func waitScreen(tc *tmuxctl.Client, text string, timeout time.Duration) error {
	deadline := clock.Now().Add(timeout)
	for {
		s, err := tc.Command(context.Background(), "capture-pane", "-p", "-t", "term")
		if err == nil && strings.Contains(s, text) {
			return nil
		}
		if clock.Now().After(deadline) {
			return fmt.Errorf("terminal does not show %q after %s:\n%s", text, timeout, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
