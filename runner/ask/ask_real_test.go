//go:build realagents

package ask

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/state"
)

// TestRealAgentsShadow runs each installed agent CLI through its built-in
// profile's headless argv (the shadow of `runner ask`) against the mock
// model API: the answer is printed, and a tool call that would write a file
// is not carried out (the read-only mode holds). Run it with
// scripts/test-real-agents.sh.
func TestRealAgentsShadow(t *testing.T) {
	for _, cli := range mockapi.CLIs() {
		t.Run(cli, func(t *testing.T) {
			if _, err := exec.LookPath(cli); err != nil {
				if os.Getenv("RUNNER_REAL_AGENTS_REQUIRED") == "1" {
					t.Fatalf("%s not on PATH (run scripts/install-agents.sh and add its bin directory to PATH)", cli)
				}
				t.Skipf("%s not on PATH", cli)
			}
			prof, err := profile.BuiltinProfile(cli)
			if err != nil {
				t.Fatal(err)
			}
			home, project := mockapi.Home(t), t.TempDir()
			target := filepath.Join(project, "shadow-wrote.txt")
			var log bytes.Buffer
			srv := mockapi.Start([]mockapi.Turn{
				{Match: "WRITE-TURN", Write: &mockapi.FileWrite{Path: target, Content: "shadow wrote this\n"}, Text: "TRIED-TO-WRITE"},
				{Match: "TEXT-TURN", Text: "SHADOW-ANSWER-42"},
			}, mockapi.Options{Log: &log})
			defer srv.Close()
			defer func() {
				if t.Failed() {
					t.Logf("mock requests:\n%s", log.String())
				}
			}()
			agentEnv, files, err := mockapi.AgentEnv(cli, srv.URL(), home, project)
			if err != nil {
				t.Fatal(err)
			}
			if err := mockapi.WriteFiles(files); err != nil {
				t.Fatal(err)
			}
			agentEnv = append(agentEnv, "PATH="+os.Getenv("PATH"), "LANG=C.UTF-8", "TERM=dumb")
			env := &runner.Env{Environ: func() []string { return agentEnv }}
			task := &state.Task{ID: "t_shadow01", Agent: cli, Dir: project, Text: "refactor the parser"}

			res := runShadow(t.Context(), depsOf(env), task, prof, Prompt(task, "", "the user", "please answer the TEXT-TURN"), 3*time.Minute)
			if res.err != nil || !strings.Contains(res.answer, "SHADOW-ANSWER-42") {
				t.Errorf("%s shadow: err %v, answer %q, stderr %q", cli, res.err, res.answer, res.stderr)
			}
			res = runShadow(t.Context(), depsOf(env), task, prof, Prompt(task, "", "the user", "please do the WRITE-TURN"), 3*time.Minute)
			t.Logf("%s shadow asked to write: err %v, answer %q", cli, res.err, messaging.OneLine(res.answer, 300))
			sawTool, offered := false, false
			for _, r := range srv.Requests() {
				// Only the requests of the write turn: not a CLI's own side
				// requests (Qwen Code 0.24.4 asks, after a turn, whether
				// anything is worth saving to its memory, offering its write
				// tools; the mock answers those with its default text).
				if !strings.HasPrefix(r.Reply, "tool: ") && !strings.Contains(r.Reply, "TRIED-TO-WRITE") {
					continue
				}
				sawTool = sawTool || strings.HasPrefix(r.Reply, "tool: ")
				offered = offered || slices.ContainsFunc(r.Tools, func(name string) bool { return writeTools[name] })
			}
			switch {
			case !sawTool && offered:
				t.Errorf("%s: the mock never asked for the write (the check below would prove nothing)", cli)
			case !offered:
				// Qwen Code's plan mode offers no tool that writes or runs
				// anything: read-only by construction.
				t.Logf("%s: the shadow offered the model no tool that writes or runs commands", cli)
			}
			if _, err := os.Stat(target); err == nil {
				t.Errorf("%s: the shadow (%q) wrote %s: its headless mode is not read-only", cli, prof.Headless, target)
			}
		})
	}
}

// writeTools are the tool names of the CLIs that write files or run
// commands (the mock's write and shell tools, and Qwen Code's/Gemini CLI's
// edit tools).
var writeTools = map[string]bool{
	"Write": true, "write_file": true, "write": true, "apply_patch": true, "edit": true, "replace": true, "Edit": true,
	"Bash": true, "run_shell_command": true, "bash": true, "shell": true, "exec_command": true,
}
