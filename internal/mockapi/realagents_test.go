//go:build realagents

package mockapi

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// headlessArgv is each CLI's one-shot mode with edits auto-approved (the
// headless modes cannot show an approval dialog).
func headlessArgv(cli, prompt string) []string {
	switch cli {
	case "claude":
		return []string{"claude", "-p", "--permission-mode", "acceptEdits", prompt}
	case "codex":
		return []string{"codex", "exec", "--skip-git-repo-check", "-s", "workspace-write", prompt}
	case "gemini":
		return []string{"gemini", "--approval-mode", "auto_edit", "-p", prompt}
	case "opencode":
		return []string{"opencode", "run", "--auto", prompt}
	case "qwen":
		return []string{"qwen", "--approval-mode", "auto-edit", "-p", prompt}
	}
	return nil
}

// TestRealAgentsHeadless runs each installed agent CLI in its headless mode
// against the mock: a plain answer, then a turn whose tool call writes a file.
// Install the CLIs with scripts/install-agents.sh and put its bin directory on
// PATH (scripts/test-real-agents.sh does both). A CLI that is not on PATH is
// skipped unless RUNNER_REAL_AGENTS_REQUIRED=1.
func TestRealAgentsHeadless(t *testing.T) {
	for _, cli := range CLIs() {
		t.Run(cli, func(t *testing.T) {
			bin, err := exec.LookPath(cli)
			if err != nil {
				if os.Getenv("RUNNER_REAL_AGENTS_REQUIRED") == "1" {
					t.Fatalf("%s not on PATH (run scripts/install-agents.sh and add its bin directory to PATH)", cli)
				}
				t.Skipf("%s not on PATH", cli)
			}
			home, project := Home(t), t.TempDir()
			target := filepath.Join(project, "hello.txt")
			var log bytes.Buffer
			srv := Start([]Turn{
				{Match: "WRITE-TURN", Write: &FileWrite{Path: target, Content: "hi from the mock\n"}, Text: "WROTE-THE-FILE"},
				{Match: "TEXT-TURN", Text: "REAL-AGENT-ANSWER-42"},
			}, Options{Log: &log})
			defer srv.Close()
			defer func() {
				if t.Failed() {
					t.Logf("mock requests:\n%s", log.String())
				}
			}()
			env, files, err := AgentEnv(cli, srv.URL(), home, project)
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteFiles(files); err != nil {
				t.Fatal(err)
			}
			env = append(env, "PATH="+os.Getenv("PATH"), "LANG=C.UTF-8", "TERM=dumb")

			run := func(prompt string) string {
				t.Helper()
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
				defer cancel()
				argv := headlessArgv(cli, prompt)
				cmd := exec.CommandContext(ctx, bin, argv[1:]...)
				cmd.Dir, cmd.Env, cmd.Stdin = project, env, nil
				cmd.WaitDelay = 5 * time.Second
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), err, stdout.String(), stderr.String())
				}
				return stdout.String()
			}

			if out := run("please answer the TEXT-TURN"); !strings.Contains(out, "REAL-AGENT-ANSWER-42") {
				t.Errorf("%s did not print the mock's answer; stdout:\n%s", cli, out)
			}
			if out := run("please do the WRITE-TURN"); !strings.Contains(out, "WROTE-THE-FILE") {
				t.Errorf("%s did not print the final answer after the tool call; stdout:\n%s", cli, out)
			}
			got, err := os.ReadFile(target)
			if err != nil || string(got) != "hi from the mock\n" {
				t.Errorf("%s: tool call did not write %s: content %q, err %v", cli, target, got, err)
			}
			var sawTool, sawResult bool
			for _, r := range srv.Requests() {
				sawTool = sawTool || strings.HasPrefix(r.Reply, "tool: ")
				sawResult = sawResult || r.ToolResult
			}
			if !sawTool || !sawResult {
				t.Errorf("%s: mock saw tool call %v, tool result %v; want both", cli, sawTool, sawResult)
			}
		})
	}
}
