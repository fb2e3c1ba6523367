//go:build realagents

package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/state"
)

// TestRealAgentsLimit: each real CLI through a mock that answers its turn
// with HTTP 429 (the provider's usage limit, in each API's words, with
// when to try again) for a while. The turn ends limited, never done nor a
// plain failed; with --on-limit wait the task is given "continue" after
// the reset and ends done with the model's answer.
func TestRealAgentsLimit(t *testing.T) {
	for _, cli := range append(append(mockapi.CLIs(), mockapi.NewCLIs()...), mockapi.AddedCLIs()...) {
		t.Run(cli, func(t *testing.T) {
			needCLI(t, cli)
			home, project := mockapi.Home(t), agentTempDir(t)
			// A quota used up: a limit the CLIs do not wait out by
			// retrying (Gemini CLI, Qwen Code and OpenCode retry a plain
			// rate limit themselves, silently or with a countdown).
			limit := &mockapi.Limit{For: 20 * time.Second, Quota: true}
			switch cli {
			case "claude":
				// Claude Code waits a short limit out by itself (its
				// retries, as for any failed request); one of 90 s it
				// gives up on at once (2.1.197 and 2.1.332, their
				// default retries).
				limit.For = 90 * time.Second
			case "qwen":
				// Qwen Code retries even a quota by itself, silently, 7
				// attempts backing off 1.5 s to 30 s with ±30% jitter
				// (its DEFAULT_RETRY_OPTIONS): 76 s, up to 100 s, before
				// it says so. CI once saw the 100 s limit end first.
				limit.For = 150 * time.Second
			case "pi":
				// pi retries by itself for a while too (3 runs, each
				// with its SDK's retries: some 20 s).
				limit.For = 60 * time.Second
			case "copilot":
				// Copilot CLI retries 5 times, backing off with jitter:
				// 50-65 s before it says so.
				limit.For = 150 * time.Second
			case "droid":
				// Factory Droid retries by itself for some 20-25 s
				// (0.225.1), then says "BYOK Error: 429 …" and runs its
				// Stop hook.
				limit.For = 90 * time.Second
			}
			if d, err := time.ParseDuration(os.Getenv("RUNNER_TEST_LIMIT_FOR")); err == nil {
				limit.For = d // exploring how long a CLI retries by itself
			}
			turns := []mockapi.Turn{
				{Match: "LIMIT-TASK", Text: "LIMIT-DONE", Limit: limit},
				{Match: "continue", Text: "LIMIT-DONE"},
			}
			h := newRealHarness(t, cli, home, project, turns)
			defer func() {
				if t.Failed() {
					t.Logf("mock requests:\n%s", h.mlog.String())
				}
			}()
			out, errOut, code, _ := h.run("dispatch", project, "--agent", cli, "--yes-trust", "--permissions", "auto", "--detach",
				"--on-limit", "wait", "--limit-wait", "25s", "--awareness", "off", "--timeout", "5m", "--ready-timeout", "3m", "please do the LIMIT-TASK now")
			if code != 0 {
				t.Fatalf("dispatch: exit %d\n%s%s", code, out, errOut)
			}
			id := h.taskID(out)
			deadline := clock.Now().Add(5 * time.Minute)
			var task *state.Task
			lastScreen := ""
			for clock.Now().Before(deadline) {
				task = h.status(id)
				if task.Tmux.Pane != "" {
					if screen, err := h.tc0.CaptureScreen(context.Background(), task.Tmux.Pane); err == nil && screen != lastScreen {
						lastScreen = screen
						t.Logf("%s [%s]:\n%s", clock.Now().Format("15:04:05"), task.Status, screen)
					}
				}
				if task.Status.IsTerminal() {
					break
				}
				time.Sleep(2 * time.Second)
			}
			logTask(t, task)
			sawLimited := false
			for _, h := range task.History {
				if h.Status == state.StatusLimited {
					sawLimited = true
				}
			}
			if !sawLimited {
				logSessionFiles(t, home)
				t.Errorf("the turn never ended limited")
			}
			if task.Status != state.StatusDone || !strings.Contains(task.Answer, "LIMIT-DONE") {
				t.Errorf("status %s, answer %q; want done with LIMIT-DONE after the reset", task.Status, task.Answer)
			}
			_, _, _, _ = h.run("cancel", id, "--kill")
		})
	}
}
