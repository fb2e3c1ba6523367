//go:build realagents

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// answerText is the mock's answer in the answer tests: two lines, so the
// summary (its first line) differs from the answer.
const answerText = "The answer streams word by word ANSWER-FIRST-LINE.\nA second line with the details ANSWER-DONE."

// toolText is the text a mock model's tool call comes with, as a model
// says what it will do before it does it: never a turn's answer.
const toolText = "I'll create the file."

// realRig is one real CLI against the mock, with a runner to drive it.
type realRig struct {
	t        *testing.T
	cli      string
	srv      *mockapi.Server
	home     string
	project  string
	env      []string
	runner   string
	stateDir string
}

// newRealRig sets up cli against a mock answering turns: a fresh home with
// the CLI's first-run files (mockapi.AgentEnv), a git project, a private
// tmux server started with a minimal environment, the CLI's variables in
// the profile's env (as a user's config would). userFiles are added to the
// home (the user's own settings).
func newRealRig(t *testing.T, cli string, turns []mockapi.Turn, userFiles func(home string, files map[string]string)) *realRig {
	t.Helper()
	if _, err := exec.LookPath(cli); err != nil {
		if os.Getenv("RUNNER_REAL_AGENTS_REQUIRED") == "1" {
			t.Fatalf("%s not on PATH (run scripts/install-agents.sh and add its bin directory to PATH)", cli)
		}
		t.Skipf("%s is not installed", cli)
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	r := &realRig{t: t, cli: cli, home: mockapi.Home(t), project: agentTempDir(t)}
	var mlog syncBuffer
	r.srv = mockapi.Start(turns, mockapi.Options{Log: &mlog})
	t.Cleanup(r.srv.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("mock requests:\n%s", mlog.String())
		}
	})
	agentEnv, files, err := mockapi.AgentEnv(cli, r.srv.URL(), r.home, r.project)
	if err != nil {
		t.Fatal(err)
	}
	if userFiles != nil {
		userFiles(r.home, files)
	}
	if err := mockapi.WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("/tmp", "rrw")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "s")
	runnerDir := selfAsRunner(t)
	r.runner = filepath.Join(runnerDir, "runner")
	path := runnerDir + string(os.PathListSeparator) + os.Getenv("PATH")
	prof, err := profile.BuiltinProfile(cli)
	if err != nil {
		t.Fatal(err)
	}
	penv := map[string]string{}
	for k, v := range prof.Env {
		penv[k] = v
	}
	for _, kv := range agentEnv {
		if k, v, _ := strings.Cut(kv, "="); k != "HOME" {
			penv[k] = v
		}
	}
	over := map[string]any{"env": penv}
	if os.Getenv("RUNNER_TEST_NO_HOOK") == "1" {
		over["hook"] = nil // compare with the screen alone
	}
	cfg, _ := json.Marshal(map[string]any{"profiles": map[string]any{cli: over}})
	cfgFile := filepath.Join(r.home, "runner-config.json")
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	r.env = append(append([]string(nil), agentEnv...),
		"PATH="+path, "LANG=C.UTF-8", "TERM=xterm-256color", "USER=runner-test",
		"RUNNER_TMUX_SOCKET="+sock, "RUNNER_CONFIG="+cfgFile,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
	getenv := func(k string) string {
		for i := len(r.env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(r.env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	if r.stateDir, err = state.DefaultDir(getenv); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.project, "calc.py"), []byte("def add(a, b):\n    return a + b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{"git", "init", "-q"}, {"git", "add", "."}, {"git", "commit", "-q", "-m", "init"}} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = r.project, r.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
	minimal := []string{"PATH=" + path, "HOME=" + r.home, "LANG=C.UTF-8", "TERM=xterm-256color", "TMPDIR=" + agentTmpDir(t, r.home)}
	tc0 := tmuxctl.New(sock, tmuxctl.WithConfig("/dev/null"), tmuxctl.WithEnv(minimal))
	if _, err := tc0.Launch(context.Background(), tmuxctl.WindowSpec{Session: "keep", Name: "keep", Argv: []string{"sleep", "3600"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tc0.KillServer(context.Background())
		os.RemoveAll(sockDir)
		endLeftBehind(r.home)
	})
	return r
}

// run runs the runner with args; it returns stdout, stderr and the exit code.
func (r *realRig) run(args ...string) (string, string, int) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.runner, args...)
	cmd.Env, cmd.Dir = r.env, r.home
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return stdout.String(), stderr.String(), ee.ExitCode()
	case err != nil:
		r.t.Fatalf("runner %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), 0
}

func (r *realRig) status(id string) *state.Task {
	r.t.Helper()
	out, errOut, code := r.run("status", id, "--json")
	if code != 0 {
		r.t.Fatalf("runner status %s: exit %d\n%s", id, code, errOut)
	}
	var task state.Task
	if err := json.Unmarshal([]byte(out), &task); err != nil {
		r.t.Fatalf("runner status %s --json: %v\n%s", id, err, out)
	}
	return &task
}

// latestTask is the id of the newest task of the state.
func (r *realRig) latestTask() string {
	r.t.Helper()
	out, _, _ := r.run("ps", "--all", "--json")
	var tasks []state.Task
	if err := json.Unmarshal([]byte(out), &tasks); err != nil || len(tasks) == 0 {
		r.t.Fatalf("runner ps --all --json: %v\n%s", err, out)
	}
	return tasks[0].ID
}

// doneAt is when the task's latest turn was recorded done.
func doneAt(t *state.Task) time.Time {
	for i := len(t.History) - 1; i >= 0; i-- {
		if t.History[i].Status == state.StatusDone {
			return t.History[i].Time
		}
	}
	return time.Time{}
}

// lastModelReply is the mock's last streamed answer to a prompt holding
// match (the turn's final answer): a request that offers tools, not a side
// request such as the title both Claude Code and Codex ask for (no tools),
// which may end after the turn.
func lastModelReply(srv *mockapi.Server, match string) (mockapi.Request, bool) {
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Stream && len(reqs[i].Tools) > 0 && strings.Contains(reqs[i].Prompt, match) && strings.HasPrefix(reqs[i].Reply, "text") {
			return reqs[i], true
		}
	}
	return mockapi.Request{}, false
}

// firstModelReply is the first streamed turn request the mock answered
// with text (a reply that contains answer).
func firstModelReply(srv *mockapi.Server, answer string) (mockapi.Request, bool) {
	for _, r := range srv.Requests() {
		if r.Stream && len(r.Tools) > 0 && strings.HasPrefix(r.Reply, "text") && strings.Contains(r.Reply, answer) {
			return r, true
		}
	}
	return mockapi.Request{}, false
}

// TestRealAgentsAnswer: `runner dispatch --print-answer` against each real
// CLI through the mock prints exactly the mock's answer; the record holds
// it whole (answer, turns[].answer), its first line is the summary, the
// agent's session id is kept when the CLI has a hook, and done is never
// recorded before the mock finished streaming the turn's answer.
func TestRealAgentsAnswer(t *testing.T) {
	for _, cli := range mockapi.CLIs() {
		t.Run(cli, func(t *testing.T) {
			turn := mockapi.Turn{Match: "ANSWER-TASK", Text: answerText, ChunkDelay: 30 * time.Millisecond}
			r := newRealRig(t, cli, []mockapi.Turn{turn}, nil)
			out, errOut, code := r.run("dispatch", r.project, "--agent", cli, "--timeout", "3m", "--ready-timeout", "90s",
				"--print-answer", "please do the ANSWER-TASK now")
			t.Logf("%s dispatch --print-answer: exit %d\nstdout:\n%s\nstderr:\n%s", cli, code, out, errOut)
			id := r.latestTask()
			task := r.status(id)
			events, _ := os.ReadFile(filepath.Join(r.stateDir, "events", id+".jsonl"))
			t.Logf("hook events:\n%s", events)
			defer func() {
				if t.Failed() {
					logTask(t, task)
				}
			}()
			if code != 0 || task.Status != state.StatusDone {
				t.Fatalf("exit %d, status %s; want 0, done", code, task.Status)
			}
			if out != answerText+"\n" {
				t.Errorf("--print-answer printed %q, want the mock's answer %q", out, answerText)
			}
			if task.Answer != answerText {
				t.Errorf("answer %q, want %q", task.Answer, answerText)
			}
			first, _, _ := strings.Cut(answerText, "\n")
			if last := task.Turns[len(task.Turns)-1]; last.Summary != first || last.Answer != answerText {
				t.Errorf("last turn %+v, want summary %q and the whole answer", last, first)
			}
			// Gemini reads its hook file only under directories root owns
			// and nobody else may write: as root runner finds one
			// (/run/runner-hooks); as another user it says so and leaves
			// the hook out.
			prof, _ := profile.BuiltinProfile(cli)
			hooked := prof.Hook != nil && !strings.Contains(errOut, "no turn-end hook")
			if prof.Hook != nil && !hooked && os.Geteuid() == 0 {
				t.Errorf("%s: runner runs as root, yet installed no hook: %s", cli, errOut)
			}
			if hooked && !strings.Contains(lastReason(task), "(hook)") {
				t.Errorf("%s has a hook, but the turn ended by %q", cli, lastReason(task))
			}
			if hooked && task.AgentSession == "" {
				t.Errorf("no agent_session recorded from %s's hook", cli)
			}
			req, ok := lastModelReply(r.srv, "ANSWER-TASK")
			switch {
			case !ok:
				t.Errorf("the mock never answered the turn's request")
			case req.Ended.IsZero() || doneAt(task).Before(req.Ended):
				t.Errorf("done recorded at %s, before the mock finished its answer (%s)", doneAt(task).Format(time.RFC3339Nano), req.Ended.Format(time.RFC3339Nano))
			default:
				t.Logf("%s: final stream event → done: %s (%s)", cli, doneAt(task).Sub(req.Ended), lastReason(task))
			}
		})
	}
}

// TestRealAgentsAnswerToolText: a turn whose model response calls a tool
// and comes with text ("I'll create the file.") records the answer the
// model gave after the tool ran, whole, for each real CLI through the mock
// (pi, Copilot CLI and Droid too); the text of the call is not the answer, nor
// its summary.
func TestRealAgentsAnswerToolText(t *testing.T) {
	for _, cli := range append(append(mockapi.CLIs(), mockapi.NewCLIs()...), mockapi.AddedCLIs()...) {
		t.Run(cli, func(t *testing.T) {
			turn := mockapi.Turn{Match: "ANSWER-TOOL", Shell: "echo made > made.txt",
				ToolText: toolText, Text: answerText, ChunkDelay: 30 * time.Millisecond}
			r := newRealRig(t, cli, []mockapi.Turn{turn}, nil)
			out, errOut, code := r.run("dispatch", r.project, "--agent", cli, "--yes-trust", "--permissions", "auto",
				"--timeout", "3m", "--ready-timeout", "90s", "--print-answer", "please do the ANSWER-TOOL now")
			t.Logf("%s dispatch --print-answer: exit %d\nstdout:\n%s\nstderr:\n%s", cli, code, out, errOut)
			id := r.latestTask()
			task := r.status(id)
			defer func() {
				if t.Failed() {
					logTask(t, task)
					events, _ := os.ReadFile(filepath.Join(r.stateDir, "events", id+".jsonl"))
					t.Logf("hook events:\n%s", events)
					logSessionFiles(t, r.home)
				}
			}()
			if code != 0 || task.Status != state.StatusDone {
				t.Fatalf("exit %d, status %s; want 0, done", code, task.Status)
			}
			if b, err := os.ReadFile(filepath.Join(r.project, "made.txt")); err != nil || string(b) != "made\n" {
				t.Errorf("the tool did not run: made.txt %q, %v", b, err)
			}
			if task.Answer != answerText || out != answerText+"\n" {
				t.Errorf("answer %q, printed %q; want the answer after the tool, %q (the call came with %q)", task.Answer, out, answerText, toolText)
			}
			first, _, _ := strings.Cut(answerText, "\n")
			if last := task.Turns[len(task.Turns)-1]; last.Summary != first {
				t.Errorf("summary %q, want %q", last.Summary, first)
			}
		})
	}
}

func lastReason(t *state.Task) string {
	for i := len(t.History) - 1; i >= 0; i-- {
		if t.History[i].Status == state.StatusDone {
			return t.History[i].Reason
		}
	}
	return ""
}

// TestRealAgentsHookBench (RUNNER_BENCH_TURNS turns, default 20, per CLI;
// scripts/bench-hook.sh runs it): for Claude Code, Codex, Cline, Kilo Code
// and Droid, the delay from the model's final stream event (the mock's) to
// the recorded done, per turn, against the delay of a trivial turn-end
// hook the user configured for the same CLI in their own settings (date
// +%s.%N >> file; Kilo's a plugin of a few lines on session.idle),
// measured in the same run. It reports medians and the ratios; it fails
// only when the user's hook stopped working or a turn did not end done.
func TestRealAgentsHookBench(t *testing.T) {
	n := 20
	if v, err := strconv.Atoi(os.Getenv("RUNNER_BENCH_TURNS")); err == nil && v > 0 {
		n = v
	}
	baselines := map[string][]time.Duration{} // final stream event → the user's own hook ran
	results := map[string][]time.Duration{}
	hookWrites := map[string][]time.Duration{} // final stream event → events file written
	ownDelay := map[string][]time.Duration{}   // events file written → done recorded
	clis := []string{"claude", "codex", "cline", "kilo", "droid"}
	for _, cli := range clis {
		t.Run(cli, func(t *testing.T) {
			var turns []mockapi.Turn
			for i := 0; i < n; i++ {
				turns = append(turns, mockapi.Turn{Match: fmt.Sprintf("BENCH-%02d", i), Text: fmt.Sprintf("Bench answer %02d done.", i)})
			}
			stamps := ""
			user := func(home string, files map[string]string) {
				stamps = filepath.Join(home, "user-stop-hook.txt")
				switch cli {
				case "claude":
					files[filepath.Join(home, ".claude", "settings.json")] = `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"date +%s.%N >> ` + stamps + `"}]}]}}`
				case "codex":
					// The user's own notify program, which runner's -c
					// notify=… would replace: runner runs it after its own.
					// (It skips Codex's hidden title turn, as runner's does.)
					cfg := filepath.Join(home, ".codex", "config.toml")
					files[cfg] = `notify = ["sh", "-c", "case \"$1\" in *'single-line task title'*) exit 0;; esac; date +%s.%N >> ` + stamps + `", "user-notify"]` + "\n" + files[cfg]
				default:
					userTurnEndHook(t, cli, home, stamps, files)
				}
			}
			r := newRealRig(t, cli, turns, user)
			var id string
			for i := 0; i < n; i++ {
				var code int
				var out, errOut string
				prompt := fmt.Sprintf("please answer BENCH-%02d now", i)
				if i == 0 {
					// A prompt pasted while the CLI still starts can be lost
					// on a loaded machine (the delivery then fails, never
					// reports done): that is not what this measures, so
					// the first turn is tried up to three times.
					for try := 0; try < 3; try++ {
						out, errOut, code = r.run("dispatch", r.project, "--agent", cli, "--timeout", "3m", "--ready-timeout", "90s", prompt)
						id = r.latestTask()
						if code == 0 || !strings.Contains(errOut, "did not take the prompt") {
							break
						}
						t.Logf("first turn not delivered (try %d), again: %s", try+1, strings.TrimSpace(errOut))
						_, _, _ = r.run("cancel", id, "--kill")
					}
				} else {
					out, errOut, code = r.run("send", id, prompt)
				}
				task := r.status(id)
				if code != 0 || task.Status != state.StatusDone {
					t.Fatalf("turn %d: exit %d, status %s\n%s%s", i, code, task.Status, out, errOut)
				}
				// The turn's own answer is in the record (not an earlier
				// turn's, taken from a stale event), and done came after the
				// model was asked and had streamed it: measured from the
				// first request that answered it (Codex may ask again about
				// the same prompt after its turn, and fire notify first).
				want := fmt.Sprintf("Bench answer %02d done.", i)
				if task.Answer != want {
					t.Fatalf("turn %d: answer %q, want %q", i, task.Answer, want)
				}
				req, ok := firstModelReply(r.srv, want)
				if !ok || req.Ended.IsZero() {
					t.Fatalf("turn %d: the mock has no finished answer", i)
				}
				if doneAt(task).Before(req.Ended) {
					t.Fatalf("turn %d: done recorded at %s, before the mock finished its answer (%s)", i,
						doneAt(task).Format(time.RFC3339Nano), req.Ended.Format(time.RFC3339Nano))
				}
				d := doneAt(task).Sub(req.Ended)
				results[cli] = append(results[cli], d)
				t.Logf("turn %2d: final stream event → done %8s (%s)", i, d.Round(100*time.Microsecond), lastReason(task))
				// The events file is only appended to: its mtime is when
				// runner's hook wrote this turn's event.
				if fi, err := os.Stat(filepath.Join(r.stateDir, "events", id+".jsonl")); err == nil && strings.Contains(lastReason(task), "(hook)") {
					w := fi.ModTime().Sub(req.Ended)
					hookWrites[cli] = append(hookWrites[cli], w)
					ownDelay[cli] = append(ownDelay[cli], d-w)
					t.Logf("         final stream event → runner's hook event written %8s; → done %8s after it", w.Round(100*time.Microsecond), (d - w).Round(100*time.Microsecond))
				}
				if stamps != "" {
					// The user's program runs after runner's hook (Codex's
					// notify chain): its line may land just after done.
					var b []byte
					var err error
					var lines []string
					for wait := clock.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
						b, err = os.ReadFile(stamps)
						if lines = strings.Fields(string(b)); len(lines) >= i+1 || clock.Now().After(wait) {
							break
						}
					}
					if err != nil || len(lines) != i+1 {
						t.Fatalf("turn %d: the user's own Stop hook did not run once per turn (%d lines, %v)", i, len(lines), err)
					}
					sec, err := strconv.ParseFloat(lines[i], 64)
					if err != nil {
						t.Fatalf("user hook line %q: %v", lines[i], err)
					}
					at := time.Unix(0, int64(sec*1e9))
					baselines[cli] = append(baselines[cli], at.Sub(req.Ended))
					t.Logf("         final stream event → user's date hook %8s", at.Sub(req.Ended).Round(100*time.Microsecond))
				}
			}
		})
	}
	base := baselines["claude"]
	if len(base) == 0 {
		base = []time.Duration{1} // claude not run (-run): no ratio to its hook
	}
	claudeBase := median(base)
	if len(baselines["claude"]) > 0 {
		t.Logf("user's trivial Stop hook (claude): median %s over %d turns", claudeBase.Round(100*time.Microsecond), len(base))
	}
	if b := baselines["codex"]; len(b) > 0 {
		t.Logf("user's trivial notify (codex, chained after runner's): median %s over %d turns", median(b).Round(100*time.Microsecond), len(b))
	}
	for _, cli := range clis {
		if ds := results[cli]; len(ds) > 0 {
			m := median(ds)
			t.Logf("%s: final stream event → done: median %s, min %s, max %s over %d turns", cli, m.Round(100*time.Microsecond),
				slices.Min(ds).Round(100*time.Microsecond), slices.Max(ds).Round(100*time.Microsecond), len(ds))
			if len(baselines["claude"]) > 0 {
				t.Logf("%s: ratio to the user's Claude Stop hook %.2f×", cli, float64(m)/float64(claudeBase))
			}
			if b := baselines[cli]; cli != "claude" && len(b) > 0 {
				t.Logf("%s: ratio to the user's own %s hook %.2f×", cli, cli, float64(m)/float64(median(b)))
			}
			if ws := hookWrites[cli]; len(ws) > 0 {
				t.Logf("%s: final stream event → runner's hook event written: median %s; event written → done: median %s, max %s",
					cli, median(ws).Round(100*time.Microsecond),
					median(ownDelay[cli]).Round(100*time.Microsecond), slices.Max(ownDelay[cli]).Round(100*time.Microsecond))
			}
		}
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// userTurnEndHook adds, for Cline, Kilo Code and Droid, a trivial turn-end
// hook of the user's own to the files of a fresh HOME (files, as
// mockapi.AgentEnv gave them), each the CLI's own way, that appends the
// time (seconds, as date +%s.%N) to stamps once per turn: Cline's
// TaskComplete script in ~/.cline/hooks, a plugin of Kilo's on
// session.idle named in ~/.config/kilo/kilo.json, Droid's Stop hook in
// ~/.factory/settings.json (runner's --settings file is merged over it).
func userTurnEndHook(t *testing.T, cli, home, stamps string, files map[string]string) {
	t.Helper()
	addKey := func(path, key string, v any) {
		var m map[string]any
		if err := json.Unmarshal([]byte(files[path]), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		m[key] = v
		b, _ := json.Marshal(m)
		files[path] = string(b)
	}
	date := "date +%s.%N >> " + stamps
	switch cli {
	case "cline":
		// An executable file named after the event (Cline 3.0.65 reads
		// ~/.cline/hooks); it is given the event on stdin.
		dir := filepath.Join(home, ".cline", "hooks")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "TaskComplete.sh"), []byte("#!/bin/sh\ncat >/dev/null\n"+date+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	case "kilo":
		plugin := filepath.Join(home, ".config", "kilo", "user-stop.js")
		files[plugin] = `import { appendFileSync } from "node:fs";
export const UserStop = async () => ({
  event: async ({ event }) => {
    if (event && event.type === "session.idle") appendFileSync(` + strconv.Quote(stamps) + `, (Date.now() / 1000).toFixed(6) + "\n");
  },
});
`
		addKey(filepath.Join(home, ".config", "kilo", "kilo.json"), "plugin", []string{"file://" + plugin})
	case "droid":
		addKey(filepath.Join(home, ".factory", "settings.json"), "hooks", map[string]any{
			"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": date}}}},
		})
	default:
		t.Fatalf("no user hook for %s", cli)
	}
}
