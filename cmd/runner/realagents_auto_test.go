//go:build realagents

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestRealAgentsAuto runs each real CLI unattended, as from cron: a new
// folder, --yes-trust and --permissions auto, a first turn whose model
// answer writes a file through the CLI's edit tool and a follow-up whose
// answer is a shell command (not an edit). Both end done with their
// answers, both files exist, and no needs_input is recorded on the way:
// nobody would have answered it.
func TestRealAgentsAuto(t *testing.T) {
	for _, cli := range mockapi.CLIs() {
		t.Run(cli, func(t *testing.T) {
			if _, err := exec.LookPath(cli); err != nil {
				if os.Getenv("RUNNER_REAL_AGENTS_REQUIRED") == "1" {
					t.Fatalf("%s not on PATH", cli)
				}
				t.Skipf("%s not on PATH", cli)
			}
			if _, err := exec.LookPath("tmux"); err != nil {
				t.Skip("tmux not installed")
			}
			home, project := mockapi.Home(t), agentTempDir(t)
			edited := filepath.Join(project, "edited.txt")
			shelled := filepath.Join(project, "shelled.txt")
			edit := mockapi.Turn{Match: "AUTO-EDIT", Write: &mockapi.FileWrite{Path: edited, Content: "edited unattended\n"}, Text: "AUTO-EDIT-DONE"}
			if cli == "codex" { // Codex writes files through its shell tool
				edit = mockapi.Turn{Match: "AUTO-EDIT", Shell: "printf 'edited unattended\\n' > " + tmuxctl.ShellQuote(edited), Text: "AUTO-EDIT-DONE"}
			}
			// A command no CLI takes for a file edit: a program run with
			// its own arguments (it writes the file itself).
			shell := mockapi.Turn{Match: "AUTO-SHELL", Shell: "date > /dev/null && sh -c " + tmuxctl.ShellQuote("printf 'shelled unattended\\n' > "+tmuxctl.ShellQuote(shelled)), Text: "AUTO-SHELL-DONE"}
			h := newRealHarness(t, cli, home, project, []mockapi.Turn{edit, shell})
			defer func() {
				if t.Failed() {
					t.Logf("mock requests:\n%s", h.mlog.String())
				}
			}()
			out, errOut, code, took := h.run("dispatch", project, "--agent", cli, "--yes-trust", "--permissions", "auto",
				"--timeout", "5m", "--ready-timeout", "3m", "please do the AUTO-EDIT now")
			t.Logf("dispatch --permissions auto: exit %d in %s\nstdout:\n%s\nstderr:\n%s", code, took.Round(100*time.Millisecond), out, errOut)
			id := h.taskID(out)
			task := h.status(id)
			if code != 0 || task.Status != state.StatusDone || !strings.Contains(task.Answer+task.ResultTail, "AUTO-EDIT-DONE") {
				t.Errorf("edit turn: exit %d, status %s, answer %q; want 0, done, AUTO-EDIT-DONE", code, task.Status, task.Answer)
				logTask(t, task)
			}
			if b, _ := os.ReadFile(edited); string(b) != "edited unattended\n" {
				t.Errorf("the edit tool call wrote %q to %s", b, edited)
			}
			out, errOut, code, took = h.run("send", id, "--timeout", "5m", "please do the AUTO-SHELL now")
			t.Logf("send (a shell command): exit %d in %s\nstdout:\n%s\nstderr:\n%s", code, took.Round(100*time.Millisecond), out, errOut)
			task = h.status(id)
			if code != 0 || task.Status != state.StatusDone || !strings.Contains(task.Answer+task.ResultTail, "AUTO-SHELL-DONE") {
				t.Errorf("shell turn: exit %d, status %s, answer %q; want 0, done, AUTO-SHELL-DONE", code, task.Status, task.Answer)
				logTask(t, task)
			}
			if b, _ := os.ReadFile(shelled); string(b) != "shelled unattended\n" {
				t.Errorf("the shell tool call wrote %q to %s", b, shelled)
			}
			for _, hc := range task.History {
				if hc.Status == state.StatusNeedsInput {
					t.Errorf("needs_input recorded at %s: %s", hc.Time.Format("15:04:05.000"), hc.Reason)
				}
			}
			_, _, _, _ = h.run("cancel", id, "--kill")
		})
	}
}
