//go:build realagents

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/state"
)

// TestRealAgentsWorktreeTrust dispatches with --worktree, without
// --yes-trust, into a project the CLI trusts already (the user answered its
// dialog there once): a CLI that trusts a folder's subfolders must not ask
// again for the task's worktree, which lives in the project's
// .git/runner-worktrees. A CLI that asks anyway is logged (its dialog is the
// one any new folder gets; --yes-trust answers it).
func TestRealAgentsWorktreeTrust(t *testing.T) {
	// Claude Code (2.1.193 on) and Gemini CLI look for a trusted ancestor;
	// Codex trusts the worktree of a trusted repository (seen with 0.169).
	inherits := map[string]bool{"claude": true, "codex": true, "gemini": true, "opencode": true, "qwen": true}
	for _, cli := range mockapi.CLIs() {
		t.Run(cli, func(t *testing.T) {
			needCLI(t, cli)
			home, project := mockapi.Home(t), agentTempDir(t)
			turn := mockapi.Turn{Match: "WORKTREE-TASK", Text: "REAL-WORKTREE-DONE"}
			h := newRealHarness(t, cli, home, project, []mockapi.Turn{turn}, project)
			out, errOut, code, took := h.run("dispatch", project, "--worktree", "--agent", cli, "--timeout", "6m", "--ready-timeout", "3m", "please do the WORKTREE-TASK now")
			t.Logf("%s --worktree in a trusted project: exit %d in %s\nstdout:\n%s\nstderr:\n%s", cli, code, took.Round(100*time.Millisecond), out, errOut)
			id := h.taskID(out)
			task := h.status(id)
			if !strings.Contains(task.Dir, "/.git/runner-worktrees/") || task.Branch != "runner/"+id {
				t.Errorf("the task works in %s on %q", task.Dir, task.Branch)
			}
			switch {
			case code == 0 && task.Status == state.StatusDone:
				t.Logf("%s: no trust dialog for the worktree", cli)
			case inherits[cli]:
				t.Errorf("%s asked again for a worktree of a trusted project: exit %d, %s, %q", cli, code, task.Status, task.Question)
				logTask(t, task)
			default:
				t.Logf("%s asks for each worktree: exit %d, %s, %q (--yes-trust answers it)", cli, code, task.Status, task.Question)
			}
		})
	}
}
