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
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/taskbook"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestRealAgentsOverlap runs two tasks of a real CLI in worktrees of one
// project (a folder the CLI has never seen), each writing shared.txt with
// its shell tool (unattended: --permissions auto). A is done first. B's
// command writes shared.txt and then waits (bounded) until runner offers
// it the notice of the overlap: its supervisor looks at B's files while B
// works. runner's notices never start a turn (issue 50, docs/agents.md
// "Notices within a turn"):
//
//   - A, done before the overlap, is not woken: done, one turn, its notice
//     pending in its inbox.
//   - B's answer stays its own: the task's answer, one turn. Where its
//     CLI's hook adds context to a running turn (`runner hook --context`
//     from Claude Code's PostToolUse hook, Gemini CLI's AfterTool, Qwen
//     Code's PostToolUse, runner's OpenCode plugin and pi extension), B
//     takes the notice within that turn: delivered, and the mock model
//     saw the notice's text beside the tool's result (or in it) in a
//     request of B's turn. Elsewhere (Codex) it waits, pending.
func TestRealAgentsOverlap(t *testing.T) {
	// pi too, of the new CLIs: its extension adds context (Copilot CLI's
	// hooks do not). claude_failed_tool: B's command fails, and Claude
	// Code's PostToolUseFailure hook gives the notice (its PostToolUse
	// runs only after a tool that succeeded).
	// Of issue 54's: Kilo Code (runner's plugin, OpenCode's, adds context
	// after each tool), Cline CLI and Factory Droid (no hook of runner's
	// adds context: the notice waits).
	for _, name := range append(mockapi.CLIs(), "pi", "claude_failed_tool", "kilo", "cline", "droid") {
		cli, failed := strings.CutSuffix(name, "_failed_tool")
		t.Run(name, func(t *testing.T) {
			needCLI(t, cli)
			home, project := mockapi.Home(t), agentTempDir(t)
			// B waits for the offered notice (runner/notice: a file of
			// its hook directory), at most 90 s, under every CLI's
			// shell-tool timeout but Codex's (its command may end
			// first: the notice is then offered after the tool ran).
			// No "$(" in it: Gemini CLI asks before a command
			// substitution (an arithmetic one too) even in YOLO mode.
			wait := "timeout 90 sh -c " + tmuxctl.ShellQuote(`until ls "$RUNNER_STATE_DIR/hooks/$RUNNER_TASK_ID/notices/"*.json >/dev/null 2>&1; do sleep 0.1; done`) + "; true"
			if failed {
				wait += " && false"
			}
			turns := []mockapi.Turn{
				// A program run with its own arguments, which no CLI
				// takes for a file edit (Claude Code asks before a
				// redirection even in auto mode).
				{Match: "OVERLAP-ONE", Shell: "date > /dev/null && sh -c " + tmuxctl.ShellQuote("printf 'one\\n' > shared.txt"), Text: "OVERLAP-ONE-DONE"},
				{Match: "OVERLAP-TWO", Shell: "date > /dev/null && sh -c " + tmuxctl.ShellQuote("printf 'two\\n' > shared.txt") + " && " + wait, Text: "OVERLAP-TWO-DONE"},
				// A turn of the notice's own, which must not happen.
				{Match: "has changed files you changed too", Text: "OVERLAP-TOLD"},
			}
			h := newRealHarness(t, cli, home, project, turns)
			withinTurn := contextHook(h.prof)
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
			bStart := clock.Now()
			b := dispatch("OVERLAP-TWO")
			inbox := func(id string) []mailbox.Entry {
				out, _, _, _ := h.run("inbox", id, "--json")
				var in struct {
					Messages []mailbox.Entry `json:"messages"`
				}
				_ = json.Unmarshal([]byte(out), &in)
				return in.Messages
			}
			bWant := state.MessagePending
			if withinTurn {
				bWant = state.MessageDelivered
			}
			for _, x := range []struct {
				self, other *state.Task
				word        string
				want        state.MessageStatus
			}{{a, b, "OVERLAP-ONE", state.MessagePending}, {b, a, "OVERLAP-TWO", bWant}} {
				// A notice taken within the turn is marked delivered as the
				// turn ends (taskbook.SettleNotices): waited for.
				var msgs []mailbox.Entry
				for deadline := clock.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
					msgs = inbox(x.self.ID)
					if (len(msgs) > 0 && msgs[0].Status == x.want) || clock.Now().After(deadline) {
						break
					}
				}
				task := h.status(x.self.ID)
				if len(msgs) != 1 || msgs[0].From != state.SenderRunner || msgs[0].Status != x.want {
					logTask(t, task)
					for _, y := range []*state.Task{a, b} {
						y = h.status(y.ID)
						shared, err := os.ReadFile(filepath.Join(y.Dir, "shared.txt"))
						t.Logf("task %s in %s: changes %+v, overlaps %+v; shared.txt there: %q %v", y.ID, y.Dir, y.Changes, y.Overlaps, shared, err)
					}
					if top, err := os.ReadFile(filepath.Join(project, "shared.txt")); err == nil {
						t.Errorf("shared.txt was written in the project itself: %q", top)
					}
					h.logAgent(t, b.ID) // its screen: a turn read ended while its command ran?
					t.Fatalf("task %s: messages %+v; want one from runner, %s", x.self.ID, msgs, x.want)
				}
				m := msgs[0]
				if txt := m.Text; !strings.Contains(txt, x.other.ID) || !strings.Contains(txt, "shared.txt") || !strings.Contains(txt, "runner msg "+x.other.ID) {
					t.Errorf("task %s: the message does not name %s, shared.txt and how to reach it:\n%s", x.self.ID, x.other.ID, txt)
				}
				if ov := task.OverlapWith(x.other.ID); ov == nil || len(ov.Files) != 1 || ov.Files[0] != "shared.txt" {
					t.Errorf("task %s: overlaps %+v", x.self.ID, task.Overlaps)
				}
				// The notice started no turn: the task is done with the one
				// turn it was dispatched for, and its answer is that turn's.
				if task.Status != state.StatusDone || task.TurnCount != 1 || readies(task) != 1 {
					logTask(t, task)
					t.Errorf("task %s: %s, %d turn(s), %d ready in its history; want done, one turn (runner's notice starts none)", x.self.ID, task.Status, task.TurnCount, readies(task))
				}
				if !strings.Contains(task.Answer, x.word+"-DONE") || strings.Contains(task.Answer+task.ResultTail, "OVERLAP-TOLD") {
					logTask(t, task)
					t.Errorf("task %s: answer %q; want its own (%s-DONE), not one to the notice", x.self.ID, task.Answer, x.word)
				}
			}
			// B got its notice while its turn ran: posted before B's turn
			// ended (while B waited for it), taken there where its CLI's
			// hook adds context.
			b = h.status(b.ID)
			bEnd := doneAt(b)
			msgs := inbox(b.ID)
			if len(msgs) == 1 && !msgs[0].Created.Before(bEnd) {
				t.Errorf("task %s: its notice was posted at %s, after its turn ended at %s: no look while it worked", b.ID,
					msgs[0].Created.Format("15:04:05.000"), bEnd.Format("15:04:05.000"))
			}
			if !withinTurn {
				t.Logf("%s has no hook that adds context to a running turn: the notice waits for B's next turn", cli)
			} else if len(msgs) == 1 {
				m := msgs[0]
				if m.Reason != taskbook.TakenReason {
					t.Errorf("task %s: its notice was %s (%q); want delivered %q", b.ID, m.Status, m.Reason, taskbook.TakenReason)
				}
				// The notice reached the model within B's turn: a request
				// after B's tool ran carries its text as context.
				var seen *mockapi.Request
				for _, r := range h.srv.Requests() {
					if r.ToolResult && strings.Contains(r.Context, m.ID) && strings.Contains(r.Context, "has changed files you changed too: shared.txt") &&
						r.Time.After(bStart) && r.Time.Before(bEnd) {
						seen = &r
						break
					}
				}
				if seen == nil {
					t.Errorf("task %s: no request of its turn (from %s to %s) carried notice %s beside a tool result", b.ID,
						bStart.Format("15:04:05.000"), bEnd.Format("15:04:05.000"), m.ID)
				} else {
					t.Logf("the model saw the notice within B's turn at %s: %q", seen.Time.Format("15:04:05.000"), seen.Context)
				}
			}
			_, _, _, _ = h.run("cancel", a.ID, b.ID, "--kill")
		})
	}
}

// contextHook says whether profile p's hook gives runner's notices to a
// running turn (`runner hook --context EVENT`, in its settings file or
// plugin, or its arguments).
func contextHook(p *profile.Profile) bool {
	return p.Hook != nil && strings.Contains(p.Hook.Settings+" "+strings.Join(p.Hook.Args, " "), "--context ")
}

// readies counts the turns task's history shows begun (ready).
func readies(task *state.Task) int {
	n := 0
	for _, hc := range task.History {
		if hc.Status == state.StatusReady {
			n++
		}
	}
	return n
}
