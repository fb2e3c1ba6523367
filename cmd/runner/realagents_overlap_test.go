//go:build realagents

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/runner/mailbox"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestRealAgentsOverlap runs two tasks of a real CLI in worktrees of one
// project (a folder the CLI has never seen), each writing shared.txt with
// its shell tool (unattended: --permissions auto). When the second turn
// ends, each agent gets one message from runner naming the other task and
// the file, and it reaches the agent as a turn of its own: the first agent
// idle at its prompt is woken, the second takes it before its dispatch
// returns. Both answer the message (the mock's OVERLAP-TOLD).
func TestRealAgentsOverlap(t *testing.T) {
	for _, cli := range mockapi.CLIs() {
		t.Run(cli, func(t *testing.T) {
			needCLI(t, cli)
			home, project := mockapi.Home(t), agentTempDir(t)
			turns := []mockapi.Turn{
				// A program run with its own arguments, which no CLI
				// takes for a file edit (Claude Code asks before a
				// redirection even in auto mode).
				{Match: "OVERLAP-ONE", Shell: "date > /dev/null && sh -c " + tmuxctl.ShellQuote("printf 'one\\n' > shared.txt"), Text: "OVERLAP-ONE-DONE"},
				{Match: "OVERLAP-TWO", Shell: "date > /dev/null && sh -c " + tmuxctl.ShellQuote("printf 'two\\n' > shared.txt"), Text: "OVERLAP-TWO-DONE"},
				{Match: "has changed files you changed too", Text: "OVERLAP-TOLD"},
			}
			h := newRealHarness(t, cli, home, project, turns)
			defer func() {
				if t.Failed() {
					t.Logf("mock requests:\n%s", h.mlog.String())
				}
			}()
			dispatch := func(word string) *state.Task {
				t.Helper()
				out, errOut, code, took := h.run("dispatch", project, "--worktree", "--agent", cli, "--yes-trust", "--permissions", "auto",
					"--awareness", "off", "--timeout", "5m", "--ready-timeout", "3m", "please do the "+word+" now")
				t.Logf("dispatch %s: exit %d in %s\nstdout:\n%s\nstderr:\n%s", word, code, took.Round(100*time.Millisecond), out, errOut)
				task := h.status(h.taskID(out))
				if code != 0 || task.Status != state.StatusDone {
					logTask(t, task)
					t.Fatalf("%s: exit %d, %s; want 0, done", word, code, task.Status)
				}
				return task
			}
			a := dispatch("OVERLAP-ONE")
			b := dispatch("OVERLAP-TWO")
			for _, x := range []struct{ self, other *state.Task }{{a, b}, {b, a}} {
				var msgs []mailbox.Entry
				var task *state.Task
				deadline := clock.Now().Add(4 * time.Minute)
				for {
					out, _, _, _ := h.run("inbox", x.self.ID, "--json")
					var in struct {
						Messages []mailbox.Entry `json:"messages"`
					}
					_ = json.Unmarshal([]byte(out), &in)
					msgs = in.Messages
					task = h.status(x.self.ID)
					if (len(msgs) > 0 && msgs[0].Status == state.MessageDelivered && task.Status == state.StatusDone) || clock.Now().After(deadline) {
						break
					}
					time.Sleep(500 * time.Millisecond)
				}
				if len(msgs) != 1 || msgs[0].From != state.SenderRunner || msgs[0].Status != state.MessageDelivered {
					logTask(t, task)
					for _, y := range []*state.Task{a, b} {
						y = h.status(y.ID)
						shared, err := os.ReadFile(filepath.Join(y.Dir, "shared.txt"))
						t.Logf("task %s in %s: changes %+v, overlaps %+v; shared.txt there: %q %v", y.ID, y.Dir, y.Changes, y.Overlaps, shared, err)
					}
					if top, err := os.ReadFile(filepath.Join(project, "shared.txt")); err == nil {
						t.Errorf("shared.txt was written in the project itself: %q", top)
					}
					t.Fatalf("task %s: messages %+v; want one from runner, delivered", x.self.ID, msgs)
				}
				if txt := msgs[0].Text; !strings.Contains(txt, x.other.ID) || !strings.Contains(txt, "shared.txt") || !strings.Contains(txt, "runner msg "+x.other.ID) {
					t.Errorf("task %s: the message does not name %s, shared.txt and how to reach it:\n%s", x.self.ID, x.other.ID, txt)
				}
				if !strings.Contains(task.Answer+task.ResultTail, "OVERLAP-TOLD") {
					logTask(t, task)
					t.Errorf("task %s: the message did not reach the agent as a turn (answer %q)", x.self.ID, task.Answer)
				}
				if ov := task.OverlapWith(x.other.ID); ov == nil || len(ov.Files) != 1 || ov.Files[0] != "shared.txt" {
					t.Errorf("task %s: overlaps %+v", x.self.ID, task.Overlaps)
				}
			}
			_, _, _, _ = h.run("cancel", a.ID, b.ID, "--kill")
		})
	}
}
