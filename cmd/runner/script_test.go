package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/cmd/runner/internal/extcmd"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/sshtest"
	"github.com/runner-cli/runner/internal/testenv"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

func TestMain(m *testing.M) {
	// The test binary links runner-ext's commands: its runner has them
	// in its tree (TestExtProgram runs the two programs as built).
	if extReal == nil {
		extReal = func(a *app, name string) *cobra.Command {
			return extcmd.New(a.factory(), readVersion().Version).Build(name)
		}
	}
	// The environment is scrubbed for the tests only: run as a command
	// inside a script, the binary keeps the script's settings.
	testscript.Main(testenv.M(parallelDefault{m}), map[string]func(){
		"runner": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// scriptParallel is how many of this package's parallel tests (the scripts)
// run at once unless -parallel says otherwise: they wait on agents, tmux
// and the clock far more than they compute, and Go's default (GOMAXPROCS: 2
// on the CI machine) left the package at 11 of the suite's minutes.
const scriptParallel = 4

// parallelDefault runs m with -test.parallel at scriptParallel when the
// command line did not set it and GOMAXPROCS is lower.
type parallelDefault struct{ m interface{ Run() int } }

func (p parallelDefault) Run() int {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && runtime.GOMAXPROCS(0) < scriptParallel {
		if err := flag.Set("test.parallel", strconv.Itoa(scriptParallel)); err != nil {
			fmt.Fprintln(os.Stderr, "test.parallel:", err)
		}
	}
	return p.m.Run()
}

// TestScripts runs the end-to-end CLI scripts in testdata/script. Each script
// gets its own HOME, XDG dirs, state dir and a private tmux server on a short
// socket path, killed when the script ends.
func TestScripts(t *testing.T) {
	t.Parallel() // alongside the scripts: it waits more than it computes
	testscript.Run(t, scriptParams(t))
}

// TestScriptsArchived runs the scripts that reach finished tasks again by
// id (wait, send, msg, --after, tree, collect, gc, ps --all) with a state
// index that keeps a single finished task: every other one is read back
// from the archive.
func TestScriptsArchived(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	for _, name := range []string{"after_sequential", "after_fail", "dispatch_lineage", "dispatch_cancel_send",
		"gc", "gc_pruned", "msg_queue", "msg_edges", "ask_siblings", "dispatch_answer"} {
		src, err := filepath.Abs(filepath.Join("testdata/script", name+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(src, filepath.Join(dir, name+".txtar")); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("RUNNER_ARCHIVE_AFTER", "1")
	p := scriptParams(t)
	p.Dir = dir
	testscript.Run(t, p)
}

func scriptParams(t *testing.T) testscript.Params {
	return testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		// RUNNER_UPDATE_GOLDEN=1 rewrites the golden screens (cmp's second
		// file) in the scripts.
		UpdateScripts: os.Getenv("RUNNER_UPDATE_GOLDEN") != "",
		Setup: func(env *testscript.Env) error {
			dir, err := os.MkdirTemp("/tmp", "rts")
			if err != nil {
				return err
			}
			sock := filepath.Join(dir, "s")
			home := filepath.Join(env.WorkDir, "home")
			for _, kv := range [][2]string{
				{"HOME", home},
				{"XDG_CONFIG_HOME", filepath.Join(home, ".config")},
				{"XDG_STATE_HOME", filepath.Join(home, ".local/state")},
				{"XDG_CACHE_HOME", filepath.Join(home, ".cache")},
				{"RUNNER_TMUX_SOCKET", sock},
				{"SOCK", sock},
				{"TERM", "xterm-256color"},
				{"GIT_CONFIG_NOSYSTEM", "1"},
				{"GIT_CONFIG_GLOBAL", "/dev/null"},
				{"GIT_AUTHOR_NAME", "Test"}, {"GIT_AUTHOR_EMAIL", "test@example.com"},
				{"GIT_COMMITTER_NAME", "Test"}, {"GIT_COMMITTER_EMAIL", "test@example.com"},
			} {
				env.Setenv(kv[0], kv[1])
			}
			// wait_free.txtar's pairs per chain: a few in the suites, the
			// issue's 200 in all in .ci/run's own run of it (40 a chain).
			env.Setenv("PAIRS", cmp.Or(os.Getenv("RUNNER_TEST_WAIT_FREE_PAIRS"), "8"))
			// The runner binary by its absolute path, for a host's --runner
			// (the "remote" side of the loopback sshd runs it).
			for _, d := range filepath.SplitList(env.Getenv("PATH")) {
				if p := filepath.Join(d, "runner"); d != "" {
					if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
						env.Setenv("RUNNER_BIN", p)
						break
					}
				}
			}
			// Programs by absolute path, for a PATH made to lack one.
			for _, prog := range []string{"tmux", "git"} {
				if p, err := exec.LookPath(prog); err == nil {
					env.Setenv(strings.ToUpper(prog)+"_BIN", p)
				}
			}
			if n := os.Getenv("RUNNER_ARCHIVE_AFTER"); n != "" {
				// Archive-everything runs (see TestScriptsArchived).
				env.Setenv("RUNNER_ARCHIVE_AFTER", n)
			}
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Values[sshdKey{}] = &sshdHolder{}
			env.Defer(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = tmuxctl.New(sock).KillServer(ctx)
				// The tmux server "on the host" of the remote-host scripts
				// (runner host add … --socket $WORK/remote.sock).
				_ = tmuxctl.New(filepath.Join(env.WorkDir, "remote.sock")).KillServer(ctx)
				// A second one (gc_other_server.txtar).
				_ = tmuxctl.New(filepath.Join(env.WorkDir, "remote2.sock")).KillServer(ctx)
				os.RemoveAll(dir)
			})
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "sshd" {
				return sshtest.Sshd() != "" || os.Getenv("CI") != "", nil
			}
			if name, ok := strings.CutPrefix(cond, "exec:"); ok {
				_, err := exec.LookPath(name)
				return err == nil, nil
			}
			return false, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfor":      cmdWaitFor,
			"pushrecv":     cmdPushRecv,
			"deadurl":      cmdDeadURL,
			"status":       cmdStatus,
			"envfrom":      cmdEnvFrom,
			"killpid":      cmdKillPID,
			"waittask":     cmdWaitTask,
			"waitgroup":    cmdWaitGroup,
			"waitspend":    cmdWaitSpend,
			"hookdone":     cmdHookDone,
			"waithistory":  cmdWaitHistory,
			"waitoverlaps": cmdWaitOverlaps,
			"waitlive":     cmdWaitLive,
			"eventsonce":   cmdEventsOnce,
			"waitpidgone":  cmdWaitPidGone,
			"waitscreen":   cmdWaitScreen,
			"waitdead":     cmdWaitDead,
			"msgstorm":     cmdMsgStorm,
			"checkmsgs":    cmdCheckMsgs,
			"before":       cmdBefore,
			"histbefore":   cmdHistBefore,
			"ttyattach":    cmdTTYAttach,
			"recordis":     cmdRecordIs,
			"maxsize":      cmdMaxSize,
			"watchstart":   cmdWatchStart,
			"watchkeys":    cmdWatchKeys,
			"watchresize":  cmdWatchResize,
			"watchscreen":  cmdWatchScreen,
			"watchcap":     cmdWatchCap,
			"watchbell":    cmdWatchBell,
			"waitprocess":  cmdWaitProcess,
			"cmdlinefree":  cmdCmdlineFree,
			"waitclient":   cmdWaitClient,
			"ttytype":      cmdTTYType,
			"sshd":         cmdSSHD,
		},
	}
}

// cmdStatus: status CODE PROGRAM ARGS... runs the program like exec and
// checks its exact exit code (stdout and stderr stay inspectable).
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdWaitScreen: waitscreen PANE TEXT [TIMEOUT] waits until the pane's
// visible screen (on the script's server) contains TEXT.
func cmdWaitScreen(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitscreen PANE TEXT [TIMEOUT]")
	}
	timeout := 20 * time.Second
	if len(args) == 3 {
		d, err := time.ParseDuration(args[2])
		ts.Check(err)
		timeout = d
	}
	c := tmuxctl.New(ts.Getenv("RUNNER_TMUX_SOCKET"))
	pollScreen(ts, fmt.Sprintf("waitscreen %s %q", args[0], args[1]), timeout,
		func(ctx context.Context) (string, error) { return c.CaptureScreen(ctx, args[0]) },
		func(s string) bool { return strings.Contains(s, args[1]) != neg })
}

// pollScreen captures a screen until ok says yes, or fails the script
// after timeout with the last screen.
func pollScreen(ts *testscript.TestScript, what string, timeout time.Duration, capture func(context.Context) (string, error), ok func(string) bool) {
	deadline := clock.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := capture(ctx)
		cancel()
		if err == nil && ok(s) {
			return
		}
		if clock.Now().After(deadline) {
			ts.Fatalf("%s: not met within %s (err %v); screen:\n%s", what, timeout, err, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdWaitDead: waitdead PANE waits until tmux has seen the pane's process
// exit (#{pane_dead}) on the script's server.
func cmdWaitDead(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitdead PANE")
	}
	c := tmuxctl.New(ts.Getenv("RUNNER_TMUX_SOCKET"))
	pollScreen(ts, "waitdead "+args[0], 20*time.Second,
		func(ctx context.Context) (string, error) {
			p, err := c.Pane(ctx, args[0])
			return strconv.FormatBool(p.Dead), err
		},
		func(s string) bool { return s == "true" })
}

// cmdWaitFor: waitfor FILE TEXT [TIMEOUT] waits until FILE contains TEXT
// (with ! : until it does not). Env vars in TEXT are expanded by testscript.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitfor FILE TEXT [TIMEOUT]")
	}
	timeout := 20 * time.Second
	if len(args) == 3 {
		d, err := time.ParseDuration(args[2])
		ts.Check(err)
		timeout = d
	}
	file := ts.MkAbs(args[0])
	deadline := clock.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(file)
		if strings.Contains(string(b), args[1]) != neg {
			return
		}
		if clock.Now().After(deadline) {
			ts.Fatalf("waitfor %s %q: not met within %s; file holds:\n%s", args[0], args[1], timeout, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdRecordIs: recordis RECORD FILE checks that the sim's record file (one
// JSON line {"prompt": …} per submitted prompt) holds exactly one prompt,
// equal to FILE's content byte for byte.
func cmdRecordIs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: recordis RECORD FILE")
	}
	want := ts.ReadFile(args[1])
	var prompts []string
	for _, l := range strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n") {
		var r struct {
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			ts.Fatalf("%s: %v", args[0], err)
		}
		prompts = append(prompts, r.Prompt)
	}
	if len(prompts) != 1 {
		ts.Fatalf("%s holds %d prompts, want 1", args[0], len(prompts))
	}
	if prompts[0] != want {
		n := 0
		for n < len(want) && n < len(prompts[0]) && want[n] == prompts[0][n] {
			n++
		}
		ts.Fatalf("the prompt the agent got (%d bytes) differs from %s (%d bytes) at byte %d", len(prompts[0]), args[1], len(want), n)
	}
}

// cmdMaxSize: maxsize FILE BYTES checks that FILE is at most BYTES long.
func cmdMaxSize(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: maxsize FILE BYTES")
	}
	max, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	if fi.Size() > max {
		ts.Fatalf("%s is %d bytes, want at most %d", args[0], fi.Size(), max)
	}
}

// cmdEnvFrom: envfrom VAR FILE REGEXP sets VAR to the first submatch of
// REGEXP (multi-line mode) in FILE; FILE may be stdout or stderr of the
// last command.
func cmdEnvFrom(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: envfrom VAR FILE REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[2])
	ts.Check(err)
	if re.NumSubexp() < 1 {
		ts.Fatalf("envfrom: %q has no submatch", args[2])
	}
	text := ts.ReadFile(args[1])
	m := re.FindStringSubmatch(text)
	if m == nil {
		ts.Fatalf("envfrom: %q not found in %s:\n%s", args[2], args[1], text)
	}
	ts.Setenv(args[0], m[1])
}

// cmdKillPID: killpid [-9|-TERM|-INT] PID sends a signal (default SIGTERM) to a
// process and, for SIGKILL, waits until it is gone (or a zombie).
func cmdKillPID(ts *testscript.TestScript, neg bool, args []string) {
	sig := syscall.SIGTERM
	if len(args) == 2 {
		switch args[0] {
		case "-9", "-KILL":
			sig = syscall.SIGKILL
		case "-TERM":
		case "-INT":
			sig = syscall.SIGINT
		default:
			ts.Fatalf("killpid: unknown signal %s", args[0])
		}
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: killpid [-9|-TERM|-INT] PID")
	}
	pid, err := strconv.Atoi(args[0])
	ts.Check(err)
	if pid <= 1 {
		ts.Fatalf("killpid: refusing pid %d", pid)
	}
	ts.Check(syscall.Kill(pid, sig))
	if sig == syscall.SIGKILL && !waitGone(pid, 10*time.Second) {
		ts.Fatalf("killpid: process %d still runs", pid)
	}
}

// cmdWaitPidGone: waitpidgone PID [TIMEOUT] waits until a process has
// exited (gone, or a zombie).
func cmdWaitPidGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitpidgone PID [TIMEOUT]")
	}
	pid, err := strconv.Atoi(args[0])
	ts.Check(err)
	timeout := 20 * time.Second
	if len(args) == 2 {
		timeout, err = time.ParseDuration(args[1])
		ts.Check(err)
	}
	if !waitGone(pid, timeout) {
		ts.Fatalf("waitpidgone: process %d still runs after %s", pid, timeout)
	}
}

// waitGone polls until pid is gone or a zombie (dead, not yet reaped).
//
// A zombie is gone only once every thread of it has exited
// (proctree.Alive): the first thread of a Go program can show 'Z' while
// the others still hold its files and their locks.
func waitGone(pid int, timeout time.Duration) bool {
	deadline := clock.Now().Add(timeout)
	for clock.Now().Before(deadline) {
		if !proctree.Alive(pid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// cmdWaitTask: waittask ID STATUS [TIMEOUT] waits until the task's status in
// the state is STATUS (read through the state package: no reconcile, no
// lock).
func cmdWaitTask(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waittask ID STATUS [TIMEOUT]")
	}
	got := ""
	pollTask(ts, args[0], args[2:], func(t *state.Task) bool {
		got = string(t.Status)
		return got == args[1]
	}, func() string { return fmt.Sprintf("waittask %s %s: status %q", args[0], args[1], got) })
}

// cmdWaitSpend: waitspend ID INPUT [TIMEOUT] waits until the task's
// recorded spend has at least INPUT input tokens (a turn's spend that its
// CLI wrote after the turn's end is added to the record a moment later).
func cmdWaitSpend(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitspend ID INPUT [TIMEOUT]")
	}
	want, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	var got int64
	pollTask(ts, args[0], args[2:], func(t *state.Task) bool {
		got = t.Spend.Input
		return got >= want
	}, func() string { return fmt.Sprintf("waitspend %s %d: %d input token(s) recorded", args[0], want, got) })
}

// cmdHookDone: hookdone ID MAX checks that the task's turn ended (done,
// in its history) at most MAX after its Stop hook ran (the last Stop
// event's time, as runner hook wrote it): how soon a turn's end is
// recorded, whatever the machine's load before the hook.
func cmdHookDone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hookdone ID MAX")
	}
	limit, err := time.ParseDuration(args[1])
	ts.Check(err)
	store, err := state.Open(scriptStateDir(ts))
	ts.Check(err)
	st, err := store.Read(context.Background())
	ts.Check(err)
	t := st.Task(args[0])
	if t == nil {
		ts.Fatalf("hookdone: no task %s", args[0])
	}
	evs, err := store.ReadTaskEvents(t.ID)
	ts.Check(err)
	var stop, done time.Time
	for _, ev := range evs {
		if ev.Event == "Stop" {
			stop = ev.Time
		}
	}
	for _, h := range t.History {
		if h.Status == state.StatusDone {
			done = h.Time
		}
	}
	if stop.IsZero() || done.IsZero() {
		ts.Fatalf("hookdone %s: Stop event at %v, done at %v", t.ID, stop, done)
	}
	if d := done.Sub(stop); d > limit {
		ts.Fatalf("hookdone %s: done %s after the Stop hook, over %s", t.ID, d, limit)
	}
}

// cmdWaitOverlaps: waitoverlaps ID N [TIMEOUT] waits until the task has
// overlaps with at least N other tasks (the last task's look at its files
// comes just after its turn's end is recorded).
func cmdWaitOverlaps(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitoverlaps ID N [TIMEOUT]")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	got := 0
	pollTask(ts, args[0], args[2:], func(t *state.Task) bool {
		got = len(t.Overlaps)
		return got >= want
	}, func() string { return fmt.Sprintf("waitoverlaps %s %d: %d overlaps", args[0], want, got) })
}

// cmdWaitLive: waitlive ID TOKENS [TIMEOUT] waits until what the task's
// running turn used so far, as read while it runs (Task.Live), is at least
// TOKENS.
func cmdWaitLive(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitlive ID TOKENS [TIMEOUT]")
	}
	want, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	var got int64
	pollTask(ts, args[0], args[2:], func(t *state.Task) bool {
		got = t.Live.Tokens()
		return got >= want
	}, func() string { return fmt.Sprintf("waitlive %s %d: %d token(s) read", args[0], want, got) })
}

// cmdEventsOnce: eventsonce FILE AFTER checks that FILE, runner events
// --json output, holds the cursors after AFTER each once, in order, with
// no gap.
func cmdEventsOnce(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: eventsonce FILE AFTER")
	}
	want, err := strconv.ParseUint(args[1], 10, 64)
	ts.Check(err)
	for i, l := range strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n") {
		var ev state.StreamEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			ts.Fatalf("%s line %d: %v", args[0], i+1, err)
		}
		want++
		if ev.Cursor != want {
			ts.Fatalf("%s line %d: cursor %d, want %d (a gap or a repeat)", args[0], i+1, ev.Cursor, want)
		}
	}
}

// cmdWaitHistory: waithistory ID STATUS N [TIMEOUT] waits until the task's
// history holds STATUS at least N times: a status a quick turn passes
// through (running, for a turn of 100 ms) is seen however late the check.
func cmdWaitHistory(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: waithistory ID STATUS N [TIMEOUT]")
	}
	want, err := strconv.Atoi(args[2])
	ts.Check(err)
	got := 0
	pollTask(ts, args[0], args[3:], func(t *state.Task) bool {
		got = 0
		for _, h := range t.History {
			if string(h.Status) == args[1] {
				got++
			}
		}
		return got >= want
	}, func() string { return fmt.Sprintf("waithistory %s %s %d: seen %d times", args[0], args[1], want, got) })
}

// pollTask reads task id every 20 ms until done says so, or fails with
// what after the timeout (the optional argument; 20 s by default).
func pollTask(ts *testscript.TestScript, id string, timeoutArg []string, done func(*state.Task) bool, what func() string) {
	timeout := 20 * time.Second
	if len(timeoutArg) == 1 {
		d, err := time.ParseDuration(timeoutArg[0])
		ts.Check(err)
		timeout = d
	}
	store, err := state.Open(scriptStateDir(ts))
	ts.Check(err)
	deadline := clock.Now().Add(timeout)
	for {
		if st, err := store.Read(context.Background()); err == nil {
			if t := st.Task(id); t != nil && done(t) {
				return
			}
		}
		if clock.Now().After(deadline) {
			ts.Fatalf("%s, not met within %s", what(), timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdHistBefore: histbefore ID1 STATUS1 ID2 STATUS2 checks, in the
// state, that task ID1 first reached STATUS1 no later than task ID2 first
// reached STATUS2 (e.g. a dependency done before its dependent starts).
// The journal cannot say it: a dependent may journal its start a moment
// before the dependency's supervisor journals the end it recorded first.
func cmdHistBefore(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: histbefore ID1 STATUS1 ID2 STATUS2")
	}
	store, err := state.Open(scriptStateDir(ts))
	ts.Check(err)
	st, err := store.Read(context.Background())
	ts.Check(err)
	first := func(id, status string) time.Time {
		t := st.Task(id)
		if t == nil {
			ts.Fatalf("histbefore: no task %s", id)
		}
		for _, h := range t.History {
			if string(h.Status) == status {
				return h.Time
			}
		}
		ts.Fatalf("histbefore: task %s was never %s", id, status)
		return time.Time{}
	}
	a, b := first(args[0], args[1]), first(args[2], args[3])
	if a.After(b) {
		ts.Fatalf("histbefore: %s was %s at %s, after %s was %s at %s", args[0], args[1], a.Format(time.RFC3339Nano), args[2], args[3], b.Format(time.RFC3339Nano))
	}
}

// cmdBefore: before FILE RE1 RE2 checks that FILE has a line matching RE1
// and, on a later line, one matching RE2 (e.g. the order of journal
// events).
func cmdBefore(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: before FILE RE1 RE2")
	}
	re1, err := regexp.Compile(args[1])
	ts.Check(err)
	re2, err := regexp.Compile(args[2])
	ts.Check(err)
	lines := strings.Split(ts.ReadFile(args[0]), "\n")
	first := -1
	for i, l := range lines {
		if first < 0 && re1.MatchString(l) {
			first = i
		}
		if re2.MatchString(l) {
			if first >= 0 && i > first {
				return
			}
			ts.Fatalf("before: %q (line %d) comes before any line matching %q", args[2], i+1, args[1])
		}
	}
	ts.Fatalf("before: no line matching %q followed by one matching %q in %s", args[1], args[2], args[0])
}

// cmdTTYAttach: ttyattach SESSION FILE attaches a tmux client on a pty to
// SESSION of the script's server and copies what the client's terminal
// receives to FILE (watch it with waitfor) until the script ends.
// ttys maps a ttyattach FILE to its pty, for ttytype.
var ttys sync.Map

// cmdTTYType: ttytype FILE TEXT types TEXT (Go escapes such as \r are
// read) into the terminal of the client `ttyattach SESSION FILE` started.
func cmdTTYType(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: ttytype FILE TEXT")
	}
	f, ok := ttys.Load(ts.MkAbs(args[0]))
	if !ok {
		ts.Fatalf("ttytype: no ttyattach client writes %s", args[0])
	}
	text, err := strconv.Unquote(`"` + args[1] + `"`)
	ts.Check(err)
	_, err = f.(*os.File).Write([]byte(text))
	ts.Check(err)
}

func cmdTTYAttach(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: ttyattach SESSION FILE")
	}
	out, err := os.Create(ts.MkAbs(args[1]))
	ts.Check(err)
	cmd := exec.Command("tmux", append(tmuxctl.SocketArgs(ts.Getenv("RUNNER_TMUX_SOCKET")), "attach-session", "-t", "="+args[0])...)
	cmd.Env = []string{"TERM=xterm-256color", "PATH=" + ts.Getenv("PATH"), "HOME=" + ts.Getenv("HOME")}
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 200})
	ts.Check(err)
	ttys.Store(ts.MkAbs(args[1]), f)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				_, _ = out.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	ts.Defer(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
		<-done
		out.Close()
	})
}

// cmdWaitGroup: waitgroup ID [TIMEOUT] waits until the group has ended
// (its supervisor recorded its end: checks and vote done).
func cmdWaitGroup(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitgroup ID [TIMEOUT]")
	}
	timeout := 20 * time.Second
	if len(args) == 2 {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		timeout = d
	}
	store, err := state.Open(scriptStateDir(ts))
	ts.Check(err)
	deadline := clock.Now().Add(timeout)
	for {
		if gs, err := store.Groups(context.Background()); err == nil && gs[args[0]] != nil && !gs[args[0]].Ended.IsZero() {
			return
		}
		if clock.Now().After(deadline) {
			ts.Fatalf("waitgroup %s: not ended within %s", args[0], timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
