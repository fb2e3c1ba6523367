//go:build realagents

package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/gc"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestRealAgentsGC dispatches a turn to each real CLI (through the model
// mock), runs `runner gc`, and checks with ps that no process the task
// started is left (Codex is launched without --no-daemon, so its
// app-server daemon would be among them), that the agent's session id was
// recorded, and that `runner send` starts the agent again on that
// conversation and delivers the follow-up. Then the window is killed by
// hand and a second gc must end whatever outlived it.
func TestRealAgentsGC(t *testing.T) {
	// RUNNER_GC_CLIS overrides the list. opencode is left out by default:
	// on this branch its first turn fails delivery (the prompt stays in
	// its composer after Enter), which is not what this test is about.
	for _, cli := range strings.Fields(cmp.Or(os.Getenv("RUNNER_GC_CLIS"), "codex gemini claude")) {
		t.Run(cli, func(t *testing.T) {
			if _, err := exec.LookPath(cli); err != nil {
				if os.Getenv("RUNNER_REAL_AGENTS_REQUIRED") == "1" {
					t.Fatalf("%s not on PATH", cli)
				}
				t.Skipf("%s is not installed (scripts/install-agents.sh)", cli)
			}
			realGC(t, cli)
		})
	}
}

func realGC(t *testing.T, cli string) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	home, project := mockapi.Home(t), agentTempDir(t)
	var mlog syncBuffer
	srv := mockapi.Start([]mockapi.Turn{
		{Match: "GC-TASK", Text: "REAL-GC-FIRST-DONE"},
		{Match: "GC-FOLLOWUP", Text: "REAL-GC-FOLLOWUP-DONE"},
	}, mockapi.Options{Log: &mlog})
	t.Cleanup(srv.Close)
	agentEnv, files, err := mockapi.AgentEnv(cli, srv.URL(), home, project)
	if err != nil {
		t.Fatal(err)
	}
	if err := mockapi.WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("/tmp", "rgc")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "s")
	runnerDir := selfAsRunner(t)
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
		k, v, _ := strings.Cut(kv, "=")
		if k != "HOME" {
			penv[k] = v
		}
	}
	over := map[string]any{"env": penv}
	if cli == "codex" {
		// Without --no-daemon: Codex starts its shared app-server daemon,
		// which outlives the pane unless gc ends it.
		over["command"] = []string{"codex"}
	}
	cfg, _ := json.Marshal(map[string]any{"profiles": map[string]any{cli: over}})
	cfgFile := filepath.Join(home, "runner-config.json")
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(home, "runner-state")
	env := append(append([]string(nil), agentEnv...),
		"PATH="+path, "LANG=C.UTF-8", "TERM=xterm-256color", "USER=runner-test",
		"RUNNER_TMUX_SOCKET="+sock, "RUNNER_CONFIG="+cfgFile, "RUNNER_STATE_DIR="+stateDir,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	tc := tmuxctl.New(sock, tmuxctl.WithConfig("/dev/null"), tmuxctl.WithEnv([]string{"PATH=" + path, "HOME=" + home, "LANG=C.UTF-8", "TERM=xterm-256color", "TMPDIR=" + agentTmpDir(t, home)}))
	if _, err := tc.Launch(context.Background(), tmuxctl.WindowSpec{Session: "keep", Name: "keep", Argv: []string{"sleep", "3600"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tc.KillServer(context.Background())
		os.RemoveAll(sockDir)
		endLeftBehind(home)
	})
	defer func() {
		if t.Failed() {
			t.Logf("mock requests:\n%s", mlog.String())
		}
	}()
	run := func(args ...string) (string, string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(runnerDir, "runner"), args...)
		cmd.Env, cmd.Dir = env, home
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("runner %v: %v", args, err)
		}
		return stdout.String(), stderr.String(), code
	}
	status := func(id string) *state.Task {
		t.Helper()
		out, errOut, code := run("status", id, "--json")
		if code != 0 {
			t.Fatalf("runner status %s: exit %d\n%s", id, code, errOut)
		}
		var task state.Task
		if err := json.Unmarshal([]byte(out), &task); err != nil {
			t.Fatalf("runner status --json: %v\n%s", err, out)
		}
		return &task
	}

	out, errOut, code := run("dispatch", project, "--agent", cli, "--yes-trust", "--awareness", "off",
		"--timeout", "3m", "--ready-timeout", "90s", "please do the GC-TASK now")
	t.Logf("dispatch: exit %d\n%s%s", code, out, errOut)
	f := strings.Fields(out)
	if len(f) == 0 || !state.ValidTaskID(f[0]) {
		t.Fatalf("no task id in dispatch's output")
	}
	id := f[0]
	if task := status(id); code != 0 || task.Status != state.StatusDone {
		logTask(t, task)
		t.Fatalf("dispatch: exit %d, status %s; want 0, done", code, task.Status)
	}
	before := taskProcs(id, stateDir)
	t.Logf("processes of %s before gc (ps):\n%s", id, psList(before))
	if len(before) == 0 {
		t.Fatalf("no process carries RUNNER_TASK_ID=%s before gc: the test would prove nothing", id)
	}

	if os.Getenv("GCDEBUG") != "" {
		pane := status(id).Tmux.Pane
		for i, k := range []string{"C-c", "C-c", "", ""} {
			if k != "" {
				tc.SendKeys(context.Background(), pane, k)
			}
			time.Sleep(300 * time.Millisecond * time.Duration(i*i+1))
			sc, _ := tc.Capture(context.Background(), pane, tmuxctl.CaptureOptions{Lines: 30})
			info, _ := tc.Pane(context.Background(), pane)
			t.Logf("after step %d (dead=%v):\n%s", i, info.Dead, sc)
		}
	}
	out, errOut, code = run("gc", "--json")
	t.Logf("gc: exit %d\n%s%s", code, out, errOut)
	var res gc.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("gc --json: exit %d, %v", code, err)
	}
	if left := alivePIDs(before); len(left) > 0 {
		t.Errorf("processes of %s left after gc (ps):\n%s", id, psList(left))
	}
	if left := taskProcs(id, stateDir); len(left) > 0 {
		t.Errorf("processes with RUNNER_TASK_ID=%s after gc (ps):\n%s", id, psList(left))
	}
	task := status(id)
	if task.Reclaimed.IsZero() || task.AgentSession == "" {
		t.Fatalf("after gc: reclaimed %v, agent_session %q; want both", task.Reclaimed, task.AgentSession)
	}
	if panes, _ := tc.ListPanes(context.Background()); len(panes) != 1 {
		t.Errorf("panes after gc: %+v; want only the keep-alive one", panes)
	}

	// The follow-up resumes the conversation.
	out, errOut, code = run("send", id, "please do the GC-FOLLOWUP now")
	t.Logf("send: exit %d\n%s%s", code, out, errOut)
	task = status(id)
	if code != 0 || task.Status != state.StatusDone || !strings.Contains(task.ResultTail, "REAL-GC-FOLLOWUP-DONE") {
		logTask(t, task)
		t.Errorf("send after gc: exit %d, status %s; want 0, done with the follow-up's answer", code, task.Status)
	}
	if !strings.Contains(mlog.String(), "GC-TASK") {
		t.Errorf("the mock never saw the first turn")
	}
	// The user closes the window by hand (no quit): what survives the
	// pane (Gemini's node children did) is found by its environment.
	resumed := taskProcs(id, stateDir)
	if err := tc.KillWindow(context.Background(), status(id).Tmux.Pane); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	t.Logf("processes of %s after its window was killed by hand (ps):\n%s", id, psList(alivePIDs(resumed)))
	out, _, code = run("gc")
	t.Logf("second gc: exit %d\n%s", code, out)
	if left := alivePIDs(append(resumed, taskProcs(id, stateDir)...)); len(left) > 0 {
		t.Errorf("processes of the resumed %s left after the second gc (ps):\n%s", id, psList(left))
	}
}

// taskProcs lists the live processes whose environment names task id of
// the state directory dir.
func taskProcs(id, dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		env := "\x00" + string(b)
		if strings.Contains(env, "\x00RUNNER_TASK_ID="+id+"\x00") && strings.Contains(env, "\x00RUNNER_STATE_DIR="+dir+"\x00") {
			out = append(out, pid)
		}
	}
	return alivePIDs(out)
}

// alivePIDs keeps the pids that run (not zombies), asking ps.
func alivePIDs(pids []int) []int {
	var out []int
	for _, line := range strings.Split(psList(pids), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[1], "Z") {
			continue
		}
		if pid, err := strconv.Atoi(f[0]); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// psList is `ps -o pid=,stat=,args= -p PIDS`.
func psList(pids []int) string {
	if len(pids) == 0 {
		return ""
	}
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	out, _ := exec.Command("ps", "-o", "pid=,stat=,args=", "-p", strings.Join(s, ",")).Output()
	return string(out)
}
