//go:build realagents

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/state"
)

// TestRealAgentsBudgetLive: a turn of each real CLI, in a folder it has
// never seen, whose first model request alone passes the task's token
// budget and asks for a slow shell command. What the turn used is read
// while it runs (from the CLI's record, or its hook's running usage), so
// the turn is interrupted and the task ends failed "budget: …" (exit 6)
// before the command ends: its late file is never written, and its result
// never reaches the model. Claude Code, Gemini CLI, Qwen Code, pi and
// Copilot CLI (its events file found by the turn's prompt) are read from
// a task's first turn on; Factory Droid (its session's total, less the
// task's earlier turns) and Cline CLI (its messages file found by the
// turn's prompt) from its second. OpenCode, read as each step
// ends (after its tools ran), and Codex, as a turn ends, cannot be held
// so: skipped, said why.
func TestRealAgentsBudgetLive(t *testing.T) {
	clis := append(append(mockapi.CLIs(), mockapi.NewCLIs()...), mockapi.AddedCLIs()...)
	for _, cli := range append(clis, "cline", "kilo") {
		t.Run(cli, func(t *testing.T) {
			needCLI(t, cli)
			home, project := mockapi.Home(t), agentTempDir(t)
			// A command that takes 100 s, and no "sleep", which Qwen Code
			// refuses past 2 s.
			const slow = "timeout 100 tail -f /dev/null; echo late > late.txt"
			big := mockapi.Usage{Input: 8000, Output: 100}
			small := mockapi.Usage{Input: 100, Output: 10}
			turns := []mockapi.Turn{
				{Match: "BUDGET-ONE", Text: "BUDGET-ONE-DONE", Usage: &small},
				{Match: "BUDGET-TWO", Shell: slow, Text: "BUDGET-TWO-DONE", Usage: &big},
			}
			h := newRealHarness(t, cli, home, project, turns)
			defer func() {
				if t.Failed() {
					t.Logf("mock requests:\n%s", h.mlog.String())
				}
			}()
			switch {
			case h.prof.Spend == "":
				t.Skipf("%s keeps no record of its spend runner reads: no token budget", cli)
			case cli == "kilo":
				// OpenCode's design: the same.
				t.Skip("Kilo Code (OpenCode's design) reports a step's spend after its tools ran")
			case cli == "opencode":
				// Its message's tokens are set as a step finishes, after
				// the step's tool calls ran: a step with a slow command
				// reports nothing until the command ends.
				t.Skip("OpenCode reports a step's spend after its tools ran")
			case cli == "codex":
				// Its rollout file does not grow during a turn (seen with
				// 0.169: the same size from the turn's delivery to its
				// end).
				t.Skip("Codex writes its session file as a turn ends")
			}
			args := []string{"--agent", cli, "--yes-trust", "--permissions", "auto", "--awareness", "off",
				"--timeout", "5m", "--ready-timeout", "3m", "--budget-tokens", "5000"}
			prompt := "please do the BUDGET-TWO now"
			firstTurn := cli == "claude" || cli == "pi" || cli == "gemini" || cli == "qwen" || cli == "copilot"
			if os.Getenv("RUNNER_TEST_WATCH_SESSIONS") == "1" {
				stopWatch := make(chan struct{})
				defer close(stopWatch)
				go func() {
					for {
						select {
						case <-stopWatch:
							return
						case <-time.After(time.Second):
						}
						_ = filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
							if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
								b, _ := os.ReadFile(p)
								t.Logf("%s %s: %d bytes, %d token_count", clock.Now().Format("15:04:05"), filepath.Base(p), len(b), strings.Count(string(b), "token_count"))
							}
							return nil
						})
					}
				}()
			}
			var out, errOut string
			var code int
			var took time.Duration
			if firstTurn {
				out, errOut, code, took = h.run(append(append([]string{"dispatch", project}, args...), prompt)...)
			} else {
				out, errOut, code, _ = h.run(append(append([]string{"dispatch", project}, args...), "please do the BUDGET-ONE now")...)
				if code != 0 {
					t.Fatalf("first turn: exit %d\n%s%s", code, out, errOut)
				}
				id := h.taskID(out)
				out, errOut, code, took = h.run("send", id, "--timeout", "5m", prompt)
				out = id + " " + out
			}
			t.Logf("exit %d in %s\nstdout:\n%s\nstderr:\n%s", code, took.Round(100*time.Millisecond), out, errOut)
			m := regexp.MustCompile(`t_[0-9a-z]+`).FindString(out + errOut)
			if m == "" {
				t.Fatalf("no task id in the output")
			}
			task := h.status(m)
			_, lateErr := os.Stat(filepath.Join(project, "late.txt"))
			logTask(t, task)
			if code != 6 || task.Status != state.StatusFailed || !strings.HasPrefix(task.LastReason(), "budget: ") {
				t.Errorf("exit %d, %s %q; want 6, failed, budget: …", code, task.Status, task.LastReason())
			}
			if lateErr == nil {
				t.Errorf("the slow command ran to its end: the turn was stopped at its end, not as it passed the budget")
			}
			asked, answered := false, false
			for _, r := range h.srv.Requests() {
				if len(r.Tools) == 0 || !strings.Contains(r.Prompt, "BUDGET-TWO") {
					continue
				}
				asked = asked || strings.HasPrefix(r.Reply, "tool: ")
				answered = answered || r.ToolResult
			}
			if !asked {
				t.Errorf("the mock never asked %s to run the slow command", cli)
			}
			if answered {
				logSessionFiles(t, home)
				t.Errorf("the slow command's result reached the model: the turn was not stopped as it passed the budget")
			}
			if task.Spend.Tokens() < big.Input {
				t.Errorf("spend %+v: want at least the %d input tokens the mock sent", task.Spend, big.Input)
			}
			_, _, _, _ = h.run("cancel", m, "--kill")
		})
	}
}
