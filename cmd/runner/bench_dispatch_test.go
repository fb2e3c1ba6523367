package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Dispatch benchmarks (scripts/bench-dispatch.sh runs them). They drive the
// real runner binary on the sim agent, on a private tmux socket and state
// dir, and compare it with baselines measured in the same run. Only
// `go test -bench` runs them.
//
//	RUNNER_BENCH_BIN   runner binary to drive (default: go build)
//	RUNNER_BENCH_TURNS turns per detector for BenchmarkDoneLatency (32)
//	RUNNER_BENCH_N     dispatches per side for BenchmarkDispatchOverhead (20)
//	RUNNER_BENCH_SEED  finished tasks in the rig's index first (0; seedBusy)
//	RUNNER_BENCH_WATCH watch time for BenchmarkIdleTasksCPU (60s)
//	RUNNER_BENCH_TASKS tasks for BenchmarkIdleTasksCPU (50)

// benchRig is one isolated runner installation: binary, tmux socket,
// state dir, config dir and a git project.
type benchRig struct {
	bin, dir, sock, stateDir, proj string
	comm                           string // the binary's /proc comm (supervisors, sims)
	env                            []string
	tc                             *tmuxctl.Client
	writes                         *writeLog
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func newBenchRig(b *testing.B) *benchRig {
	b.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux not installed")
	}
	dir, err := os.MkdirTemp("/tmp", "rbd")
	if err != nil {
		b.Fatal(err)
	}
	r := &benchRig{dir: dir, sock: filepath.Join(dir, "s"), stateDir: filepath.Join(dir, "state"), proj: filepath.Join(dir, "proj")}
	r.bin = os.Getenv("RUNNER_BENCH_BIN")
	if r.bin == "" {
		r.bin = filepath.Join(dir, "runner")
		// runner-ext beside it, as installed: serve, mcp and watch run there.
		for _, built := range [][2]string{{r.bin, "."}, {filepath.Join(dir, extName), "./runner-ext"}} {
			if out, err := goBuildStatic(built[0], built[1]).CombinedOutput(); err != nil {
				b.Fatalf("go build %s: %v\n%s", built[1], err, out)
			}
		}
	}
	for _, d := range []string{r.stateDir, filepath.Join(r.stateDir, "logs"), filepath.Join(dir, "cfg"), filepath.Join(dir, "base"), r.proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX") && !strings.HasPrefix(kv, "RUNNER_") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			r.env = append(r.env, kv)
		}
	}
	r.env = append(r.env, "RUNNER_STATE_DIR="+r.stateDir, "RUNNER_TMUX_SOCKET="+r.sock, "XDG_CONFIG_HOME="+filepath.Join(dir, "cfg"))
	// A small git project, so dispatch takes a real snapshot.
	if err := os.WriteFile(filepath.Join(r.proj, "README"), []byte("bench\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = r.proj
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	r.comm = filepath.Base(r.bin)
	if len(r.comm) > 15 {
		r.comm = r.comm[:15]
	}
	if cfg := os.Getenv("RUNNER_BENCH_CONFIG"); cfg != "" {
		// A what-if: runner's config for this run (e.g. a profile override).
		if err := os.MkdirAll(filepath.Join(dir, "cfg", "runner"), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cfg", "runner", "config.json"), []byte(cfg), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	r.tc = tmuxctl.New(r.sock, tmuxctl.WithConfig("/dev/null"))
	r.writes = newWriteLog(b, filepath.Join(r.stateDir, "logs"), filepath.Join(dir, "base"), r.stateDir)
	b.Cleanup(func() {
		r.writes.close()
		r.stopSupervisors()
		_ = r.tc.KillServer(context.Background())
		os.RemoveAll(dir)
	})
	return r
}

// runner runs the runner binary with the rig's environment.
func (r *benchRig) runner(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, r.bin, args...)
	cmd.Env, cmd.Dir = r.env, r.proj
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("runner %s: %w: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

func (r *benchRig) readState(b *testing.B) *state.State {
	st, err := state.Open(r.stateDir)
	if err != nil {
		b.Fatal(err)
	}
	s, err := st.Read(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func (r *benchRig) task(b *testing.B, id string) *state.Task {
	t, ok := r.readState(b).Tasks[id]
	if !ok {
		b.Fatalf("task %s not in the state", id)
	}
	return t
}

// stopSupervisors ends the supervisor processes the rig's dispatches
// started (by pid, from the state file), and waits for them to exit (5 s
// at most): a supervisor records its end as it goes, and one still
// writing after the rig's directory is removed would make it again.
func (r *benchRig) stopSupervisors() {
	st, err := state.Open(r.stateDir)
	if err != nil {
		return
	}
	s, err := st.Read(context.Background())
	if err != nil {
		return
	}
	var pids []int
	for _, t := range s.Tasks {
		if t.SupervisorPID > 0 && t.SupervisorPID != os.Getpid() && procComm(t.SupervisorPID) == r.comm {
			if syscall.Kill(t.SupervisorPID, syscall.SIGTERM) == nil {
				pids = append(pids, t.SupervisorPID)
			}
		}
	}
	deadline := clock.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for procComm(pid) == r.comm && clock.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// writeLog records when files in a few directories were written, as seen
// by inotify in this process: the transcripts (pipe-pane output) are the
// reference for "the agent drew its last screen".
type writeLog struct {
	mu      sync.Mutex
	writes  map[string][]time.Time // data written
	creates map[string][]time.Time // created or renamed into place
	w       *fsnotify.Watcher
	done    chan struct{}
}

func newWriteLog(b *testing.B, dirs ...string) *writeLog {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil {
			b.Fatal(err)
		}
	}
	l := &writeLog{writes: map[string][]time.Time{}, creates: map[string][]time.Time{}, w: w, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for ev := range w.Events {
			now := clock.Now()
			l.mu.Lock()
			switch {
			case ev.Op&fsnotify.Write != 0:
				l.writes[ev.Name] = append(l.writes[ev.Name], now)
			case ev.Op&fsnotify.Create != 0: // also a rename into place
				l.creates[ev.Name] = append(l.creates[ev.Name], now)
			}
			l.mu.Unlock()
		}
	}()
	go func() {
		for range w.Errors {
		}
	}()
	return l
}

func (l *writeLog) close() { l.w.Close(); <-l.done }

// between returns how many times file was written (or, with created,
// created or renamed into place) in [from, to].
func (l *writeLog) between(file string, created bool, from, to time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.writes
	if created {
		m = l.creates
	}
	var out []time.Time
	for _, t := range m[file] {
		if !t.Before(from) && !t.After(to) {
			out = append(out, t)
		}
	}
	return len(out)
}

func (l *writeLog) last(file string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.writes[file]
	if len(w) == 0 {
		return time.Time{}
	}
	return w[len(w)-1]
}

// boxShown reports whether the sim's ready box is the bottom of the screen
// and no spinner is visible: the sim's own contract (doc.go), independent
// of the runner's profile patterns.
func boxShown(screen string) bool {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) < 3 || strings.Contains(screen, "Working…") {
		return false
	}
	n := len(lines)
	return strings.HasPrefix(lines[n-1], "╰") && strings.HasPrefix(lines[n-2], "│ >") && strings.HasPrefix(lines[n-3], "╭")
}

// trueEnd waits until the turn really ended (the sim's box is back and its
// transcript has been quiet for 300 ms) and returns the time of the last
// transcript write: when the box reached the pane's output.
func (r *benchRig) trueEnd(b *testing.B, pane, transcript string, start time.Time) time.Time {
	ctx := context.Background()
	deadline := clock.Now().Add(60 * time.Second)
	for clock.Now().Before(deadline) {
		s, err := r.tc.CaptureScreen(ctx, pane)
		if err != nil {
			b.Fatalf("capture %s: %v", pane, err)
		}
		last := r.writes.last(transcript)
		if boxShown(s) && last.After(start) && clock.Since(last) >= 300*time.Millisecond {
			return last
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatalf("pane %s: the sim's turn did not end within 60 s", pane)
	return time.Time{}
}

// waitBox polls the pane every 5 ms until the sim's box shows (and, if
// want is set, the screen has a line equal to it); it returns when.
func (r *benchRig) waitBox(b *testing.B, pane, want string) time.Time {
	ctx := context.Background()
	deadline := clock.Now().Add(30 * time.Second)
	for clock.Now().Before(deadline) {
		s, err := r.tc.CaptureScreen(ctx, pane)
		if err == nil && boxShown(s) && (want == "" || slices.Contains(strings.Split(s, "\n"), want)) {
			return clock.Now()
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Fatalf("pane %s: no ready box within 30 s", pane)
	return time.Time{}
}

// lastDone returns the time of the last "done" (or other terminal) status
// recorded after since, and that status.
func lastDone(t *state.Task, since time.Time) (time.Time, state.Status) {
	for i := len(t.History) - 1; i >= 0; i-- {
		h := t.History[i]
		if h.Time.Before(since) {
			break
		}
		if h.Status.IsTerminal() {
			return h.Time, h.Status
		}
	}
	return time.Time{}, ""
}

type durations []time.Duration

func (d durations) q(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// latencyTurns are the mixed turns: a spinner, a silent busy period, an
// answer, and a silent period longer than the naive baselines' quiet time.
var latencyTurns = []string{"sleep 300ms", "silent 500ms", "say all good\nsleep 150ms", "silent 2500ms"}

type detector struct {
	name       string
	lat        durations
	falseDone  int
	missed     int
	falseByDir map[string]int
}

func (d *detector) add(turn string, done, end time.Time) {
	switch {
	case done.IsZero():
		d.missed++
	case done.Before(end):
		d.falseDone++
		if d.falseByDir == nil {
			d.falseByDir = map[string]int{}
		}
		d.falseByDir[strings.Fields(turn)[0]+" "+strings.Fields(turn)[1]]++
	default:
		d.lat = append(d.lat, done.Sub(end))
	}
}

// BenchmarkDoneLatency measures how long after the sim's last output of a
// turn (its ready box reaching the pane's transcript, seen by inotify here)
// the runner records the turn as done, with and without the sim's Stop
// hook, over mixed turns driven by `runner send`. Baselines on the same
// kind of turns, in the same run, on a sim pane driven directly: naive hash
// polling (capture every 0.5 s, done after 2 s unchanged: tmux-cli) and
// #{window_activity} reading (every 100 ms, done when the activity is 2 s
// old: its resolution is one second). A "done" before the turn's last
// output is false; none within the turn's timeout is missed.
func BenchmarkDoneLatency(b *testing.B) {
	r := newBenchRig(b)
	ctx := context.Background()
	turns := envInt("RUNNER_BENCH_TURNS", 32)

	// Two runner tasks: with the sim's hook and without.
	start := func(extra ...string) (id, pane, transcript string) {
		args := append([]string{"dispatch", r.proj, "--agent", "sim", "--detach", "--awareness", "off"}, extra...)
		out, err := r.runner(ctx, append(args, "say ready")...)
		if err != nil {
			b.Fatal(err)
		}
		id = strings.TrimSpace(out)
		if _, err := r.runner(ctx, "wait", id, "--timeout", "60s"); err != nil {
			b.Fatal(err)
		}
		t := r.task(b, id)
		return id, t.Tmux.Pane, t.Transcript
	}
	hookID, hookPane, hookLog := start()
	plainID, plainPane, plainLog := start("--no-hook")

	// The baseline pane: the sim started directly, its output piped to a
	// transcript, with a hook that stamps the time the box was back (a
	// cross-check of the transcript reference).
	baseLog := filepath.Join(r.dir, "base", "sim.log")
	stamp := filepath.Join(r.dir, "base", "stamps")
	basePane, err := r.tc.Launch(ctx, tmuxctl.WindowSpec{Session: "base", Cwd: r.proj, Size: tmuxctl.Size{Width: 200, Height: 50},
		Argv: []string{r.bin, "agent-sim", "--hook", "sh -c 'date +%s%N >> " + stamp + "'"}})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.tc.PipePane(ctx, basePane, baseLog); err != nil {
		b.Fatal(err)
	}
	r.waitBox(b, basePane, "")

	hookDet, plainDet := &detector{name: "runner (hook)"}, &detector{name: "runner (--no-hook)"}
	naiveDet, actDet := &detector{name: "naive hash polling"}, &detector{name: "#{window_activity}"}
	var stampOff durations
	runnerTurn := func(d *detector, id, pane, transcript, text string) {
		t0 := clock.Now()
		tctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		_, err := r.runner(tctx, "send", id, "--timeout", "30s", text)
		cancel()
		end := r.trueEnd(b, pane, transcript, t0)
		done, st := lastDone(r.task(b, id), t0)
		if err != nil || st != state.StatusDone {
			b.Logf("%s turn %q: status %q, err %v", d.name, text, st, err)
			done = time.Time{}
		}
		d.add(text, done, end)
	}
	baseTurn := func(text string) {
		t0 := clock.Now()
		if err := r.tc.Send(ctx, basePane, text, tmuxctl.SendOptions{Enter: true, EnterDelay: -1}); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		var naiveDone, actDone time.Time
		wg.Add(2)
		go func() { defer wg.Done(); naiveDone = naiveHashDone(ctx, r.tc, basePane, 30*time.Second) }()
		go func() { defer wg.Done(); actDone = activityDone(ctx, r.tc, basePane, 30*time.Second) }()
		wg.Wait()
		end := r.trueEnd(b, basePane, baseLog, t0)
		naiveDet.add(text, naiveDone, end)
		actDet.add(text, actDone, end)
		if raw, err := os.ReadFile(stamp); err == nil {
			ls := strings.Fields(string(raw))
			if ns, err := strconv.ParseInt(ls[len(ls)-1], 10, 64); err == nil {
				stampOff = append(stampOff, end.Sub(time.Unix(0, ns)))
			}
		}
	}
	b.ResetTimer()
	for i := range turns {
		text := latencyTurns[i%len(latencyTurns)]
		runnerTurn(hookDet, hookID, hookPane, hookLog, text)
		runnerTurn(plainDet, plainID, plainPane, plainLog, text)
		baseTurn(text)
	}
	b.StopTimer()

	fmt.Printf("\n# done-detection latency after the sim's last output, %d mixed turns each (%s)\n", turns, strings.ReplaceAll(strings.Join(latencyTurns, ", "), "\n", "+"))
	fmt.Printf("# %-20s %8s %8s %8s %6s %6s %10s\n", "detector", "median", "p90", "max", "false", "missed", "x runner")
	ref := hookDet.lat.q(0.5)
	for _, d := range []*detector{hookDet, plainDet, naiveDet, actDet} {
		fmt.Printf("# %-20s %6.1fms %6.1fms %6.1fms %6d %6d %9.1fx", d.name, ms(d.lat.q(0.5)), ms(d.lat.q(0.9)), ms(d.lat.q(1)), d.falseDone, d.missed, float64(d.lat.q(0.5))/float64(max(ref, time.Microsecond)))
		if len(d.falseByDir) > 0 {
			fmt.Printf("  false on: %v", d.falseByDir)
		}
		fmt.Println()
	}
	fmt.Printf("# transcript write vs the sim's hook stamp (transcript minus stamp): median %.1fms, p90 %.1fms (negative: the transcript saw the box first)\n",
		ms(stampOff.q(0.5)), ms(stampOff.q(0.9)))
	b.ReportMetric(ms(hookDet.lat.q(0.5)), "hook-median-ms")
	b.ReportMetric(ms(hookDet.lat.q(0.9)), "hook-p90-ms")
	b.ReportMetric(ms(plainDet.lat.q(0.5)), "nohook-median-ms")
	b.ReportMetric(ms(plainDet.lat.q(0.9)), "nohook-p90-ms")
	b.ReportMetric(ms(naiveDet.lat.q(0.5)), "naive-median-ms")
	b.ReportMetric(ms(actDet.lat.q(0.5)), "activity-median-ms")
	b.ReportMetric(float64(hookDet.falseDone+plainDet.falseDone), "runner-false")
	b.ReportMetric(float64(hookDet.missed+plainDet.missed), "runner-missed")
	b.ReportMetric(float64(naiveDet.falseDone), "naive-false")
	b.ReportMetric(float64(actDet.falseDone), "activity-false")
}

// naiveHashDone is tmux-cli's wait: capture every 0.5 s, done once the
// screen's hash has not changed for 2 s. It returns when it said done.
func naiveHashDone(ctx context.Context, tc *tmuxctl.Client, pane string, limit time.Duration) time.Time {
	deadline := clock.Now().Add(limit)
	last, since := "", clock.Now()
	for clock.Now().Before(deadline) {
		s, err := tc.CaptureScreen(ctx, pane)
		if err != nil {
			return time.Time{}
		}
		if h := tmuxctl.ScreenHash(s, nil); h != last {
			last, since = h, clock.Now()
		} else if clock.Since(since) >= 2*time.Second {
			return clock.Now()
		}
		time.Sleep(500 * time.Millisecond)
	}
	return time.Time{}
}

// activityDone reads #{window_activity} (seconds) every 100 ms and says
// done when it is 2 s old (one second of resolution: at least 1 s quiet).
func activityDone(ctx context.Context, tc *tmuxctl.Client, pane string, limit time.Duration) time.Time {
	deadline := clock.Now().Add(limit)
	for clock.Now().Before(deadline) {
		out, err := tc.Command(ctx, "display-message", "-p", "-t", pane, "#{window_activity}")
		if err != nil {
			return time.Time{}
		}
		act, _ := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
		if act > 0 && clock.Now().Unix()-act >= 2 {
			return clock.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Time{}
}

// BenchmarkDispatchOverhead measures the wall time of `runner dispatch
// PROJECT --agent sim "say hi"` (a git project: a real snapshot) against the
// agent's own time measured the same way in the same run: the sim started
// directly in a new tmux window, its box awaited by 5 ms capture polling,
// the text pasted with Enter at once, and the answer and box awaited the
// same way. The runner's wall time is broken down from the task's status
// history. (The transcript cannot split launch from ready: pipe-pane is
// attached after the window starts, so the agent's first screen may never
// reach it.)
func BenchmarkDispatchOverhead(b *testing.B) {
	r := newBenchRig(b)
	ctx := context.Background()
	n := envInt("RUNNER_BENCH_N", 20)
	if _, err := r.tc.Launch(ctx, tmuxctl.WindowSpec{Session: "keep", Argv: []string{"sleep", "3600"}}); err != nil {
		b.Fatal(err)
	}
	stateFile := filepath.Join(r.stateDir, "state.json")
	journal := filepath.Join(r.stateDir, "journal.jsonl")

	type parts struct{ wall, start, snapshot, ready, deliver, turn, exit time.Duration }
	var runs []parts
	var stateWrites, journalWrites []int
	dispatch := func(record bool) {
		t0 := clock.Now()
		out, err := r.runner(ctx, "dispatch", r.proj, "--agent", "sim", "--json", "say hi")
		wall := clock.Since(t0)
		t1 := clock.Now()
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
		at := map[state.Status]time.Time{}
		for _, h := range t.History {
			if _, ok := at[h.Status]; !ok {
				at[h.Status] = h.Time
			}
		}
		if record {
			runs = append(runs, parts{wall: wall, start: at[state.StatusQueued].Sub(t0),
				snapshot: at[state.StatusStarting].Sub(at[state.StatusQueued]),
				ready:    at[state.StatusReady].Sub(at[state.StatusStarting]),
				deliver:  at[state.StatusRunning].Sub(at[state.StatusReady]), turn: at[state.StatusDone].Sub(at[state.StatusRunning]),
				exit: t1.Sub(at[state.StatusDone])})
			stateWrites = append(stateWrites, r.writes.between(stateFile, true, t0, t1))
			journalWrites = append(journalWrites, r.writes.between(journal, false, t0, t1))
		}
		_ = r.tc.KillWindow(ctx, t.Tmux.Pane)
	}
	var agentWall, agentReady, agentTurn durations
	direct := func(record bool) {
		t0 := clock.Now()
		pane, err := r.tc.Launch(ctx, tmuxctl.WindowSpec{Session: "direct", Cwd: r.proj, Size: tmuxctl.Size{Width: 200, Height: 50}, Argv: []string{r.bin, "agent-sim"}})
		if err != nil {
			b.Fatal(err)
		}
		ready := r.waitBox(b, pane, "")
		if err := r.tc.Send(ctx, pane, "say hi", tmuxctl.SendOptions{Enter: true, EnterDelay: -1}); err != nil {
			b.Fatal(err)
		}
		end := r.waitBox(b, pane, "hi")
		if record {
			agentWall = append(agentWall, end.Sub(t0))
			agentReady = append(agentReady, ready.Sub(t0))
			agentTurn = append(agentTurn, end.Sub(ready))
		}
		_ = r.tc.KillWindow(ctx, pane)
	}
	var version durations
	if seed := envInt("RUNNER_BENCH_SEED", 0); seed > 0 {
		_, _, tmpl := r.dispatchOnce(b)
		seedBusy(b, r, tmpl, seed) // a busy state directory (bench_busy_test.go)
	}
	dispatch(false) // warm-up: the project's session, the page cache
	direct(false)
	b.ResetTimer()
	for range n {
		dispatch(true)
		direct(true)
		t0 := clock.Now()
		if _, err := r.runner(ctx, "version"); err != nil {
			b.Fatal(err)
		}
		version = append(version, clock.Since(t0))
	}
	b.StopTimer()
	// The cost of one state update on this machine, for the breakdown.
	st, _ := state.Open(r.stateDir)
	var upd durations
	for range 20 {
		t0 := clock.Now()
		if err := st.Update(ctx, func(s *state.State) error { s.Tasks["t_bench"] = &state.Task{ID: "t_bench", Created: t0}; return nil }); err != nil {
			b.Fatal(err)
		}
		upd = append(upd, clock.Since(t0))
	}

	col := func(f func(parts) time.Duration) durations {
		var d durations
		for _, p := range runs {
			d = append(d, f(p))
		}
		return d
	}
	wall := col(func(p parts) time.Duration { return p.wall })
	overhead := wall.q(0.5) - agentWall.q(0.5)
	fmt.Printf("\n# dispatch overhead, %d runs each: runner dispatch . --agent sim \"say hi\" vs the sim driven directly\n", n)
	fmt.Printf("# %-54s %8s %8s\n", "", "median", "p90")
	row := func(name string, d durations) {
		fmt.Printf("# %-54s %6.0fms %6.0fms\n", name, ms(d.q(0.5)), ms(d.q(0.9)))
	}
	row("runner dispatch wall", wall)
	row("agent alone wall (direct, baseline)", agentWall)
	fmt.Printf("# %-54s %6.0fms  (%.2fx the agent alone)\n", "overhead (median difference)", ms(overhead), float64(wall.q(0.5))/float64(agentWall.q(0.5)))
	row("  process start → queued (incl. exec, config)", col(func(p parts) time.Duration { return p.start }))
	row("  queued → starting (git snapshot)", col(func(p parts) time.Duration { return p.snapshot }))
	row("  starting → ready (launch, pipe, sim start, detection)", col(func(p parts) time.Duration { return p.ready }))
	row("  ready → running (delivery)", col(func(p parts) time.Duration { return p.deliver }))
	row("  running → done (turn + detection)", col(func(p parts) time.Duration { return p.turn }))
	row("  done → process exit", col(func(p parts) time.Duration { return p.exit }))
	row("  agent alone: launch → box", agentReady)
	row("  agent alone: send → answer + box", agentTurn)
	row("  runner version (process start floor)", version)
	slices.Sort(stateWrites)
	slices.Sort(journalWrites)
	fmt.Printf("# state.json writes per dispatch: %d, journal writes: %d; one state update here: median %.1fms\n",
		stateWrites[len(stateWrites)/2], journalWrites[len(journalWrites)/2], ms(upd.q(0.5)))
	b.ReportMetric(ms(wall.q(0.5)), "dispatch-ms")
	b.ReportMetric(ms(agentWall.q(0.5)), "agent-ms")
	b.ReportMetric(ms(overhead), "overhead-ms")
	b.ReportMetric(float64(wall.q(0.5))/float64(agentWall.q(0.5)), "ratio")
}

// procStat returns a process's utime+stime and cutime+cstime (clock ticks)
// and its parent pid, from /proc/PID/stat.
func procStat(pid int) (self, kids int64, ppid int, ok bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, false
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	v := func(i int) int64 { x, _ := strconv.ParseInt(f[i], 10, 64); return x }
	// After the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
	return v(11) + v(12), v(13) + v(14), int(v(1)), true
}

func procComm(pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(raw))
}

// children returns the live children of pid, by comm.
func children(pid int) map[int]string {
	out := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, _, pp, ok := procStat(p); ok && pp == pid {
			out[p] = procComm(p)
		}
	}
	return out
}

const tick = 10 * time.Millisecond // USER_HZ = 100

// cpuSample is the CPU (in ticks) of the processes under test at one time.
type cpuSample struct {
	watchers, server, pipes, agents int64
}

func (r *benchRig) sample(serverPID int, supervisors []int, self bool) cpuSample {
	var c cpuSample
	for _, p := range supervisors {
		if s, k, _, ok := procStat(p); ok {
			c.watchers += s + k
		}
	}
	if self {
		var u, k syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &k)
		ns := u.Utime.Nano() + u.Stime.Nano() + k.Utime.Nano() + k.Stime.Nano()
		c.watchers += ns / int64(tick)
	}
	s, k, _, _ := procStat(serverPID)
	c.server = s + k
	for p, comm := range children(serverPID) {
		s, k, _, _ := procStat(p)
		if comm == r.comm { // the sim agents
			c.agents += s + k
		} else { // pipe-pane's cat (and any shell around it)
			c.pipes += s + k
		}
	}
	return c
}

func (c cpuSample) sub(o cpuSample) cpuSample {
	return cpuSample{c.watchers - o.watchers, c.server - o.server, c.pipes - o.pipes, c.agents - o.agents}
}

func (c cpuSample) total() float64 {
	return (time.Duration(c.watchers+c.server+c.pipes) * tick).Seconds()
}

// BenchmarkIdleTasksCPU dispatches RUNNER_BENCH_TASKS (50) detached tasks
// whose sim agents then sit busy with no output (`silent 10m`) and measures
// the CPU used over RUNNER_BENCH_WATCH (60 s) by all their supervisors
// (with their reaped tmux clients), the tmux server (with its reaped
// children) and the pipe-pane processes; then stops the supervisors and
// measures naive capture-pane polling of the same panes every 0.5 s (this
// process and its tmux clients, the server, the pipes) for as long.
func BenchmarkIdleTasksCPU(b *testing.B) {
	r := newBenchRig(b)
	ctx := context.Background()
	n := envInt("RUNNER_BENCH_TASKS", 50)
	watch := 60 * time.Second
	if v := os.Getenv("RUNNER_BENCH_WATCH"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		watch = d
	}
	var ids []string
	for range n {
		out, err := r.runner(ctx, "dispatch", r.proj, "--agent", "sim", "--detach", "--awareness", "off", "silent 10m")
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	// All delivered and running.
	deadline := clock.Now().Add(3 * time.Minute)
	var sups []int
	var panes []string
	for {
		st := r.readState(b)
		sups, panes = nil, nil
		running := 0
		for _, id := range ids {
			t := st.Tasks[id]
			if t.Status == state.StatusRunning {
				running++
			}
			sups = append(sups, t.SupervisorPID)
			panes = append(panes, t.Tmux.Pane)
		}
		if running == n {
			break
		}
		if clock.Now().After(deadline) {
			b.Fatalf("only %d of %d tasks running after 3 min", running, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	out, err := r.tc.Command(ctx, "display-message", "-p", "#{pid}")
	if err != nil {
		b.Fatal(err)
	}
	serverPID, _ := strconv.Atoi(strings.TrimSpace(out))
	for _, p := range sups {
		if procComm(p) != r.comm {
			b.Fatalf("supervisor %d is not running", p)
		}
	}
	time.Sleep(2 * time.Second) // let the last deliveries' captures finish

	b.ResetTimer()
	before := r.sample(serverPID, sups, false)
	time.Sleep(watch)
	ours := r.sample(serverPID, sups, false).sub(before)
	alive := 0
	for _, p := range sups {
		if procComm(p) == r.comm {
			alive++
		}
	}
	if alive != n {
		b.Errorf("%d of %d supervisors died during the watch", n-alive, n)
	}
	if st := r.readState(b); true {
		for _, id := range ids {
			if s := st.Tasks[id].Status; s != state.StatusRunning {
				b.Errorf("task %s is %s after the watch, want running (the agent is still busy)", id, s)
			}
		}
	}

	// The baseline: the supervisors stopped, the same panes polled.
	r.stopSupervisors()
	for _, p := range sups {
		for i := 0; i < 200 && procComm(p) == r.comm; i++ {
			time.Sleep(25 * time.Millisecond)
		}
	}
	time.Sleep(time.Second)
	before = r.sample(serverPID, nil, true)
	wctx, cancel := context.WithTimeout(ctx, watch)
	var wg sync.WaitGroup
	for _, p := range panes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for wctx.Err() == nil {
				_, _ = r.tc.CaptureScreen(wctx, p)
				select {
				case <-wctx.Done():
				case <-time.After(500 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	cancel()
	naive := r.sample(serverPID, nil, true).sub(before)
	b.StopTimer()

	secs := func(t int64) float64 { return (time.Duration(t) * tick).Seconds() }
	fmt.Printf("\n# CPU-seconds over %s, %d idle tasks (silent 10m)\n", watch, n)
	fmt.Printf("# %-30s %10s %8s %8s %8s %8s\n", "", "watchers", "tmux", "pipes", "total", "agents")
	fmt.Printf("# %-30s %10.2f %8.2f %8.2f %8.2f %8.2f\n", "runner supervisors", secs(ours.watchers), secs(ours.server), secs(ours.pipes), ours.total(), secs(ours.agents))
	fmt.Printf("# %-30s %10.2f %8.2f %8.2f %8.2f %8.2f\n", "naive 0.5 s capture polling", secs(naive.watchers), secs(naive.server), secs(naive.pipes), naive.total(), secs(naive.agents))
	fmt.Printf("# runner / naive: %.3f (per minute: runner %.2f CPU-s, naive %.2f CPU-s)\n", ours.total()/max(naive.total(), 0.01),
		ours.total()*60/watch.Seconds(), naive.total()*60/watch.Seconds())
	b.ReportMetric(ours.total()*60/watch.Seconds(), "runner-cpu-s/min")
	b.ReportMetric(naive.total()*60/watch.Seconds(), "naive-cpu-s/min")
	b.ReportMetric(ours.total()/max(naive.total(), 0.01), "ratio")
}
