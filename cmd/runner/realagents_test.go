//go:build realagents

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// realAgentCase is what differs between the CLIs in a full dispatch.
type realAgentCase struct {
	// turn makes the mock answer the prompt with a tool call that writes
	// file, so the CLI shows its real approval dialog.
	turn func(match, file string) mockapi.Turn
	// approve is the --approve-rule for that dialog.
	approve string
	// extra are dispatch flags this CLI needs, each with its reason.
	extra []string
	// trust matches the question of the CLI's folder-trust dialog; empty
	// for a CLI that does not ask (opencode; Qwen Code's folder trust is
	// off by default).
	trust string
}

var realAgentCases = map[string]realAgentCase{
	"claude": {
		turn: func(match, file string) mockapi.Turn {
			return mockapi.Turn{Match: match, Write: &mockapi.FileWrite{Path: file, Content: "hi from the mock\n"}}
		},
		approve: `Do you want to create \S*\.txt\?`,
		trust:   `Yes, I trust this folder`,
		// Claude Code 2.1 draws its prompt, then probes the terminal and
		// re-mounts its input: a prompt pasted in the first second or so is
		// lost (2 of 4 runs), and dispatch, seeing the same empty prompt,
		// reports done. Until dispatch confirms delivery by the echoed
		// prompt or busy state, hold the ready screen 2 s before delivering.
		extra: nil, // ready_hold in the profile covers the early prompt
	},
	// Codex's own default writes inside its workspace without asking;
	// in its asking mode (--permissions ask: a read-only sandbox) a write
	// is an escalated shell command, which asks.
	"codex": {
		turn: func(match, file string) mockapi.Turn {
			return mockapi.Turn{Match: match, Shell: "printf 'hi from the mock\\n' > " + tmuxctl.ShellQuote(file), Escalate: true}
		},
		approve: `Would you like to run the following command\?`,
		trust:   `Trust this folder\?`,
	},
	"gemini": {
		turn: func(match, file string) mockapi.Turn {
			return mockapi.Turn{Match: match, Write: &mockapi.FileWrite{Path: file, Content: "hi from the mock\n"}}
		},
		approve: `Apply this change\?`,
		trust:   `Do you trust the files in this folder\?`,
		// Gemini CLI probes the terminal after drawing its input box; a
		// paste in that window is lost (see claude).
		extra: nil, // ready_hold in the profile covers the early prompt
	},
	"opencode": {
		turn: func(match, file string) mockapi.Turn {
			return mockapi.Turn{Match: match, Write: &mockapi.FileWrite{Path: file, Content: "hi from the mock\n"}}
		},
		approve: `(?s)Permission required.*\.txt`,
		// opencode redraws its home screen while it loads providers; a
		// paste in that window is lost (see claude).
		extra: nil, // ready_hold in the profile covers the early prompt
	},
	"qwen": {
		turn: func(match, file string) mockapi.Turn {
			return mockapi.Turn{Match: match, Write: &mockapi.FileWrite{Path: file, Content: "hi from the mock\n"}}
		},
		approve: `Apply this change\?`,
	},
}

// finalWords is the mock's final answer after the tool result, streamed a
// word at a time: a dispatch that reports done must have seen all of it.
const finalWords = "I wrote the file you asked for and checked it twice so this answer streams for a while REAL-DISPATCH-DONE"

// TestRealAgentsDispatch runs `runner dispatch` (the test binary as runner)
// against each installed real agent CLI talking to the mock model API, from
// a fresh HOME (only the API key and the onboarding that needs the network
// seeded) in a project folder the CLI has never seen: without --yes-trust a
// CLI that asks about the folder stops on its question (exit 4); with it, a
// turn that writes a file through the CLI's approval dialog, auto-answered
// by --approve-rule (exit 0, done, file written, ready → running → done,
// the trust and approval answers journaled), a message turn, and the same
// task without a rule (exit 4 with the question). No turn may be recorded
// done before the mock received its request. The tmux server is started beforehand with a minimal
// environment, as a long-running server would be, so the CLI's variables
// reach the pane only through the profile's env (set in the config file).
func TestRealAgentsDispatch(t *testing.T) {
	for _, cli := range mockapi.CLIs() {
		t.Run(cli, func(t *testing.T) {
			if _, err := exec.LookPath(cli); err != nil {
				if os.Getenv("RUNNER_REAL_AGENTS_REQUIRED") == "1" {
					t.Fatalf("%s not on PATH (run scripts/install-agents.sh and add its bin directory to PATH)", cli)
				}
				t.Skipf("%s is not installed (scripts/install-agents.sh installs it; scripts/test-real-agents.sh runs this test with it)", cli)
			}
			tc := realAgentCases[cli]
			// The CLI's asking mode for its version (runner's default,
			// given here so the test says what it is about): Claude Code
			// 2.1.332 and Qwen Code 0.24.4 approve by themselves by
			// default.
			tc.extra = append([]string{"--permissions", "ask"}, tc.extra...)
			realDispatch(t, cli, tc)
		})
	}
}

func realDispatch(t *testing.T, cli string, tc realAgentCase) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	home, project := mockapi.Home(t), agentTempDir(t)
	approved := filepath.Join(project, "approved.txt")
	asked := filepath.Join(project, "asked.txt")
	first := tc.turn("APPROVE-TASK", approved)
	first.Text, first.ChunkDelay = finalWords, 150*time.Millisecond
	second := tc.turn("ASK-TASK", asked)
	second.Text = "not reached"
	third := mockapi.Turn{Match: "MESSAGE-TASK", Text: "REAL-MESSAGE-DONE", ChunkDelay: 50 * time.Millisecond}
	probe := mockapi.Turn{Match: "PROBE-TASK", Text: "REAL-PROBE-DONE"}
	h := newRealHarness(t, cli, home, project, []mockapi.Turn{third, first, second, probe})
	srv, run, status, taskID, getenv, tc0, prof := h.srv, h.run, h.status, h.taskID, h.getenv, h.tc0, h.prof
	// The API key reaches the CLI through its environment only: ps never
	// shows it, during any of the dispatches below.
	defer watchCmdlines(t, mockapi.MockAPIKey)()
	defer func() {
		if t.Failed() {
			t.Logf("mock requests:\n%s", h.mlog.String())
		}
	}()

	// doneAfterRequest checks that every done of the task's history
	// recorded after since came after the mock received a request for the
	// turn's prompt (match).
	doneAfterRequest := func(task *state.Task, match string, since time.Time) {
		t.Helper()
		var first time.Time
		for _, r := range srv.Requests() {
			if strings.Contains(r.Prompt, match) && (first.IsZero() || r.Time.Before(first)) {
				first = r.Time
			}
		}
		for _, h := range task.History {
			if h.Status != state.StatusDone || h.Time.Before(since) {
				continue
			}
			if first.IsZero() || h.Time.Before(first) {
				t.Errorf("done recorded at %s, but the mock's first request for %s came at %s (zero: never)",
					h.Time.Format("15:04:05.000"), match, first.Format("15:04:05.000"))
			}
		}
	}

	// 0. A folder the CLI has never seen, without --yes-trust: a CLI that
	// asks about it stops there (exit 4, its question); one that does not
	// ask runs the turn.
	args := append([]string{"dispatch", project, "--agent", cli, "--timeout", "6m", "--ready-timeout", "3m"}, tc.extra...)
	out, errOut, code, took := run(append(args, "please do the PROBE-TASK now")...)
	t.Logf("%s dispatch into a new folder without --yes-trust: exit %d in %s\nstdout:\n%s\nstderr:\n%s", cli, code, took.Round(100*time.Millisecond), out, errOut)
	id := taskID(out)
	task := status(id)
	if tc.trust != "" {
		if code != 4 || task.Status != state.StatusNeedsInput || !regexp.MustCompile(tc.trust).MatchString(task.Question) {
			t.Errorf("without --yes-trust: exit %d, status %s, question %q; want 4, needs_input, the trust dialog (%s)", code, task.Status, task.Question, tc.trust)
			logTask(t, task)
		}
	} else {
		if code != 0 || task.Status != state.StatusDone || !strings.Contains(task.ResultTail, "REAL-PROBE-DONE") {
			t.Errorf("%s does not ask about folders: exit %d, status %s; want 0, done with REAL-PROBE-DONE", cli, code, task.Status)
			logTask(t, task)
		}
		doneAfterRequest(task, "PROBE-TASK", time.Time{})
	}
	_, _, _, _ = run("cancel", id, "--kill")

	// 1. With --yes-trust and an approve rule: done, exit 0.
	watch := watchStates(t, tc0, prof, project)
	args = append([]string{"dispatch", project, "--agent", cli, "--yes-trust", "--approve-rule", tc.approve,
		"--timeout", "6m", "--ready-timeout", "3m"}, tc.extra...)
	out, errOut, code, took = run(append(args, "please do the APPROVE-TASK now")...)
	seen := watch()
	t.Logf("%s dispatch with --yes-trust --approve-rule: exit %d in %s; states seen by polling: %v\nstdout:\n%s\nstderr:\n%s",
		cli, code, took.Round(100*time.Millisecond), seen, out, errOut)
	id = taskID(out)
	task = status(id)
	defer func() {
		if t.Failed() {
			logTask(t, task)
			logs, _, _, _ := run("logs", "--raw", id)
			t.Logf("transcript of %s (last 3000 bytes):\n%q", id, logs[max(0, len(logs)-3000):])
		}
	}()
	if code != 0 || task.Status != state.StatusDone {
		t.Errorf("exit %d, status %s; want 0, done", code, task.Status)
	}
	if b, err := os.ReadFile(approved); err != nil || string(b) != "hi from the mock\n" {
		t.Errorf("the approved tool call did not write %s: %q, %v", approved, b, err)
	}
	var hist []state.Status
	for _, h := range task.History {
		if len(hist) == 0 || hist[len(hist)-1] != h.Status {
			hist = append(hist, h.Status)
		}
	}
	if !isSubsequence([]state.Status{state.StatusReady, state.StatusRunning, state.StatusDone}, hist) {
		t.Errorf("status history %v does not go ready → running → done", hist)
	}
	if !slices.Contains(seen, string(profile.StateBusy)) {
		t.Errorf("the pane never showed busy to the profile while polled: %v", seen)
	}
	// Done must not come before the final answer finished streaming.
	if !strings.Contains(task.ResultTail, "REAL-DISPATCH-DONE") {
		t.Errorf("done reported before the final answer ended; result tail:\n%s", task.ResultTail)
	}
	stateDir, err := state.DefaultDir(getenv)
	if err != nil {
		t.Fatal(err)
	}
	doneAfterRequest(task, "APPROVE-TASK", time.Time{})
	answers := journalKinds(t, filepath.Join(stateDir, state.JournalFile), id, "auto-answer")
	if len(answers) == 0 {
		t.Errorf("no auto-answer in the journal for %s", id)
	}
	if tc.trust != "" && !slices.ContainsFunc(answers, func(a string) bool { return strings.Contains(a, "trust dialog (--yes-trust)") }) {
		t.Errorf("the trust dialog's acceptance is not journaled for %s: %q", id, answers)
	}
	for _, d := range journalKinds(t, filepath.Join(stateDir, state.JournalFile), id, "delivery") {
		t.Logf("journal delivery: %s", d)
	}
	for _, a := range answers {
		t.Logf("journal auto-answer: %s", a)
	}
	events, _ := os.ReadFile(filepath.Join(stateDir, "events", id+".jsonl"))
	t.Logf("hook events of %s:\n%s", id, events)
	logTask(t, task) // its history times each phase (start-up, trust, delivery, turn)
	// 1b. A message to the idle agent: delivered at once, as a turn of
	// its own, recorded as delivered.
	msgSent := clock.Now()
	out, errOut, code, _ = run("msg", id, "please handle the MESSAGE-TASK now")
	if code != 0 || !strings.Contains(out, "delivering") {
		t.Errorf("runner msg to the idle %s agent: exit %d\n%s%s", cli, code, out, errOut)
	}
	waitOut, waitErr, code, took := run("wait", "--timeout", "90s", id)
	task = status(id)
	t.Logf("%s message turn: wait exit %d in %s\n%s%s", cli, code, took.Round(100*time.Millisecond), waitOut, waitErr)
	if code != 0 || task.Status != state.StatusDone || !strings.Contains(task.ResultTail, "REAL-MESSAGE-DONE") {
		t.Errorf("message turn: exit %d, status %s, result tail:\n%s", code, task.Status, task.ResultTail)
		logTask(t, task)
		if b, err := os.ReadFile(filepath.Join(stateDir, "logs", id+".supervisor.log")); err == nil {
			t.Logf("supervisor log:\n%s", b)
		}
		tail, _, _, _ := run("logs", id)
		t.Logf("transcript (last 2500 bytes):\n%s", tail[max(0, len(tail)-2500):])
	}
	doneAfterRequest(task, "MESSAGE-TASK", msgSent)
	inbox, _, _, _ := run("inbox", id, "--json")
	if !strings.Contains(inbox, `"status": "delivered"`) {
		t.Errorf("the message is not recorded delivered:\n%s", inbox)
	}
	_, _, _, _ = run("cancel", id, "--kill")

	// 2. Without a rule: the question, exit 4.
	args = append([]string{"dispatch", project, "--agent", cli, "--timeout", "6m", "--ready-timeout", "3m"}, tc.extra...)
	out, errOut, code, took = run(append(args, "please do the ASK-TASK now")...)
	t.Logf("%s dispatch without a rule: exit %d in %s\nstdout:\n%s\nstderr:\n%s", cli, code, took.Round(100*time.Millisecond), out, errOut)
	id = taskID(out)
	task = status(id)
	if code != 4 || task.Status != state.StatusNeedsInput {
		t.Errorf("exit %d, status %s; want 4, needs_input", code, task.Status)
	}
	if !regexp.MustCompile(tc.approve).MatchString(task.Question) || !strings.Contains(out, "question:") {
		t.Errorf("question %q (printed: %v) does not match the dialog %q", task.Question, strings.Contains(out, "question:"), tc.approve)
	}
	if _, err := os.Stat(asked); err == nil {
		t.Errorf("%s was written although nobody approved it", asked)
	}
	_, _, _, _ = run("cancel", id, "--kill")
}

// watchStates polls the first agent pane that appears on the server (not
// the keep-alive session) and classifies it with prof until the returned
// function is called; that returns the distinct states in order.
func watchStates(t *testing.T, c *tmuxctl.Client, prof *profile.Profile, project string) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	session := projects.SessionName("", project)
	var (
		mu   sync.Mutex
		seen []string
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		pane := ""
		known := map[string]bool{}
		if panes, err := c.ListPanes(ctx); err == nil {
			for _, p := range panes {
				known[p.ID] = true
			}
		}
		for ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			if pane == "" {
				panes, _ := c.ListPanes(ctx)
				for _, p := range panes {
					if p.Session == session && !known[p.ID] {
						pane = p.ID
					}
				}
				continue
			}
			info, err := c.Pane(ctx, pane)
			if err != nil {
				continue
			}
			screen, err := c.CaptureScreen(ctx, pane)
			if err != nil {
				continue
			}
			d := profile.DetectPane(prof, screen, profile.PaneInfo{Dead: info.Dead, DeadStatus: info.DeadStatus,
				CurrentCommand: info.CurrentCommand, AlternateOn: info.AlternateOn, CursorKnown: true, CursorY: info.CursorY})
			mu.Lock()
			if len(seen) == 0 || seen[len(seen)-1] != string(d.State) {
				seen = append(seen, string(d.State))
			}
			mu.Unlock()
		}
	}()
	return func() []string {
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

func isSubsequence(want, got []state.Status) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// journalKinds returns the messages of task's journal events of kind.
func journalKinds(t *testing.T, file, task, kind string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("journal: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev state.Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Task == task && ev.Kind == kind {
			out = append(out, ev.Message)
		}
	}
	return out
}

// realHarness is one real agent CLI set up as a user would have it: a
// fresh HOME with only its API key (and the folders in trusted trusted, as
// after answering its dialog once), the model mock, runner's config with
// the CLI's environment, a git project, and a private tmux server.
type realHarness struct {
	home, project string
	srv           *mockapi.Server
	mlog          syncBuffer
	getenv        func(string) string
	tc0           *tmuxctl.Client
	prof          *profile.Profile
	run           func(args ...string) (string, string, int, time.Duration)
	status        func(id string) *state.Task
	taskID        func(stdout string) string
}

func newRealHarness(t *testing.T, cli, home, project string, turns []mockapi.Turn, trusted ...string) *realHarness {
	return newRealHarnessEnv(t, cli, home, project, turns, nil, trusted...)
}

// newRealHarnessEnv is newRealHarness with extra KEY=VALUE settings of
// the user's for the CLI (in runner's environment and the profile's env,
// as a user's config would have them).
func newRealHarnessEnv(t *testing.T, cli, home, project string, turns []mockapi.Turn, extra []string, trusted ...string) *realHarness {
	return newRealHarnessCLIs(t, []cliTurns{{cli, turns}}, home, project, extra, trusted...)
}

// cliTurns is one CLI of a harness and what its mock answers.
type cliTurns struct {
	cli   string
	turns []mockapi.Turn
}

// newRealHarnessCLIs is a harness for several CLIs at once (a group's
// candidates), each with a mock model API of its own; the harness's srv
// and prof are the first's.
func newRealHarnessCLIs(t *testing.T, clis []cliTurns, home, project string, extra []string, trusted ...string) *realHarness {
	h := &realHarness{home: home, project: project}
	var agentEnv []string
	profiles := map[string]any{}
	for i, c := range clis {
		srv := mockapi.Start(c.turns, mockapi.Options{Log: &h.mlog})
		t.Cleanup(srv.Close)
		// No project given: the folder is one the CLI has never trusted.
		cenv, files, err := mockapi.AgentEnv(c.cli, srv.URL(), home, trusted...)
		if err != nil {
			t.Fatal(err)
		}
		if err := mockapi.WriteFiles(files); err != nil {
			t.Fatal(err)
		}
		// The profile's env carries the CLI's variables (and keeps the
		// built-in ones): dispatch passes only PATH, HOME, USER and the
		// locale from its own environment to a pane.
		prof, err := profile.BuiltinProfile(c.cli)
		if err != nil {
			t.Fatal(err)
		}
		penv := map[string]string{}
		for k, v := range prof.Env {
			penv[k] = v
		}
		for _, kv := range append(append([]string(nil), cenv...), extra...) {
			k, v, _ := strings.Cut(kv, "=")
			if k != "HOME" {
				penv[k] = v
			}
		}
		profiles[c.cli] = map[string]any{"env": penv}
		agentEnv = append(agentEnv, cenv...)
		if i == 0 {
			h.srv, h.prof = srv, prof
		}
	}
	agentEnv = append(agentEnv, extra...)
	sockDir, err := os.MkdirTemp("/tmp", "rra")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "s")
	runnerDir := runnerOutsideTmp(t)
	path := runnerDir + string(os.PathListSeparator) + os.Getenv("PATH")

	cfg, _ := json.Marshal(map[string]any{"profiles": profiles})
	cfgFile := filepath.Join(home, "runner-config.json")
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(append([]string(nil), agentEnv...),
		"PATH="+path, "LANG=C.UTF-8", "TERM=xterm-256color", "USER=runner-test",
		"RUNNER_TMUX_SOCKET="+sock, "RUNNER_CONFIG="+cfgFile,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
	getenv := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}

	// The project is a git repository with one file, as the fixtures'.
	for _, argv := range [][]string{{"git", "init", "-q"}, {"git", "add", "."}, {"git", "commit", "-q", "-m", "init"}} {
		if argv[1] == "add" {
			if err := os.WriteFile(filepath.Join(project, "calc.py"), []byte("def add(a, b):\n    return a + b\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = project, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}

	// A server started with a minimal environment, before any dispatch
	// (its TMPDIR inside the test's home: agentTmpDir).
	minimal := []string{"PATH=" + path, "HOME=" + home, "LANG=C.UTF-8", "TERM=xterm-256color", "TMPDIR=" + agentTmpDir(t, home)}
	tc0 := tmuxctl.New(sock, tmuxctl.WithConfig("/dev/null"), tmuxctl.WithEnv(minimal))
	ctx := context.Background()
	if _, err := tc0.Launch(ctx, tmuxctl.WindowSpec{Session: "keep", Name: "keep", Argv: []string{"sleep", "3600"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tc0.KillServer(context.Background())
		os.RemoveAll(sockDir)
		endLeftBehind(home)
	})

	run := func(args ...string) (string, string, int, time.Duration) {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(cctx, filepath.Join(runnerDir, "runner"), args...)
		cmd.Env, cmd.Dir = env, home
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := clock.Now()
		err := cmd.Run()
		took := clock.Since(start)
		code := 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatalf("runner %v: %v", args, err)
		}
		return stdout.String(), stderr.String(), code, took
	}
	status := func(id string) *state.Task {
		t.Helper()
		out, errOut, code, _ := run("status", id, "--json")
		if code != 0 {
			t.Fatalf("runner status %s: exit %d\n%s", id, code, errOut)
		}
		var task state.Task
		if err := json.Unmarshal([]byte(out), &task); err != nil {
			t.Fatalf("runner status %s --json: %v\n%s", id, err, out)
		}
		return &task
	}
	taskID := func(stdout string) string {
		f := strings.Fields(stdout)
		if len(f) == 0 || !state.ValidTaskID(f[0]) {
			t.Fatalf("no task id at the start of dispatch's output:\n%s", stdout)
		}
		return f[0]
	}

	h.getenv, h.tc0, h.run, h.status, h.taskID = getenv, tc0, run, status, taskID
	return h
}

func logTask(t *testing.T, task *state.Task) {
	t.Helper()
	var b strings.Builder
	for _, h := range task.History {
		b.WriteString("  " + h.Time.Format("15:04:05.000") + " " + string(h.Status) + " " + h.Reason + "\n")
	}
	t.Logf("task %s %s, delivery %q\nhistory:\n%squestion:\n%s\nresult tail:\n%s", task.ID, task.Status, task.Delivery, b.String(), task.Question, task.ResultTail)
}

// syncBuffer is a bytes.Buffer safe for the mock's concurrent log writes
// and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watchCmdlines looks at every process's command line (what `ps -eo args`
// shows every user) every 100 ms until the returned function is called,
// which fails the test if one held secret.
func watchCmdlines(t *testing.T, secret string) (stop func()) {
	done := make(chan struct{})
	found := make(chan string, 1)
	go func() {
		for {
			paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range paths {
				if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
					select {
					case found <- strings.ReplaceAll(string(b), "\x00", " "):
					default:
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() {
		close(done)
		select {
		case line := <-found:
			t.Errorf("a command line showed the API key: %q", line)
		default:
		}
	}
}

// agentTempDir is a temporary directory removed after the test (see
// mockapi.RemoveAfter).
// needCLI skips the test when the agent CLI or tmux is missing (fails it
// for the CLI when RUNNER_REAL_AGENTS_REQUIRED=1, as in CI).
func needCLI(t *testing.T, cli string) {
	t.Helper()
	if _, err := exec.LookPath(cli); err != nil {
		if os.Getenv("RUNNER_REAL_AGENTS_REQUIRED") == "1" {
			t.Fatalf("%s not on PATH", cli)
		}
		t.Skipf("%s not on PATH", cli)
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
}

func agentTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "realagent")
	if err != nil {
		t.Fatal(err)
	}
	mockapi.RemoveAfter(t, dir)
	return dir
}

// runnerOutsideTmp copies this test binary, as runner, into a folder that
// is not under /tmp, as a user's runner is: a CLI's own sandbox (Codex's)
// gives its commands a /tmp of their own, where a runner under /tmp would
// not be found.
func runnerOutsideTmp(t *testing.T) string {
	t.Helper()
	if d, ok := runnerDirs.Load(t.Name()); ok {
		return d.(string)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mockapi.Home(t), "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "runner"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	runnerDirs.Store(t.Name(), dir)
	return dir
}

// runnerDirs: each test's runner folder (runnerOutsideTmp), made once.
var runnerDirs sync.Map
