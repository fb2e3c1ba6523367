//go:build realagents

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestRealAgentsSpend: a turn of each real CLI (pi and Copilot CLI too) through the mock, in a
// folder it has never seen, that runs a shell command (two model requests:
// the tool call, which comes with text as a model says what it will do,
// then the answer). The answer recorded is the one after the tool ran,
// never the text of the call. The spend recorded for the turn, read
// from the CLI's own record, is exactly the usage the mock sent in the
// turn's requests (those that offer tools: the agent's own, not a side
// request such as a title, which no CLI counts in its session), and a
// second turn adds its own.
func TestRealAgentsSpend(t *testing.T) {
	clis := append(append(mockapi.CLIs(), mockapi.NewCLIs()...), mockapi.AddedCLIs()...)
	for _, cli := range append(clis, "cline", "kilo") {
		t.Run(cli, func(t *testing.T) {
			needCLI(t, cli)
			home, project := mockapi.Home(t), agentTempDir(t)
			one := mockapi.Usage{Input: 1234, Output: 56, Cached: 789}
			two := mockapi.Usage{Input: 2000, Output: 300, Cached: 0}
			turns := []mockapi.Turn{
				{Match: "SPEND-ONE", Shell: "date > /dev/null && sh -c " + tmuxctl.ShellQuote("printf 'one\\n' > spent.txt"), ToolText: toolText, Text: "SPEND-ONE-DONE", Usage: &one},
				{Match: "SPEND-TWO", Text: "SPEND-TWO-DONE", Usage: &two},
			}
			h := newRealHarness(t, cli, home, project, turns)
			defer func() {
				if t.Failed() {
					t.Logf("mock requests:\n%s", h.mlog.String())
				}
			}()
			out, errOut, code, took := h.run("dispatch", project, "--agent", cli, "--yes-trust", "--permissions", "auto",
				"--awareness", "off", "--timeout", "5m", "--ready-timeout", "3m", "please do the SPEND-ONE now")
			t.Logf("dispatch: exit %d in %s\nstdout:\n%s\nstderr:\n%s", code, took.Round(100*time.Millisecond), out, errOut)
			id := h.taskID(out)
			task := h.status(id)
			if code != 0 || task.Status != state.StatusDone {
				logTask(t, task)
				t.Fatalf("exit %d, %s; want 0, done", code, task.Status)
			}
			if task.Answer != "SPEND-ONE-DONE" {
				t.Errorf("answer %q, want the one after the tool ran, %q (the tool call came with %q)", task.Answer, "SPEND-ONE-DONE", toolText)
			}
			// A CLI that reports cost (OpenCode) prices the mock's model
			// at 0: a known cost of $0.
			costed := 0
			if h.prof.SpendCost {
				costed = 1
			}
			// Droid's record is its session's total, in which the title
			// request it makes at the session's first prompt (no tools
			// offered) counts: the turn's side requests count for it.
			sides := profile.SessionTotal(h.prof.Spend)
			want := sentUsage(h.srv, "SPEND-ONE", costed, sides)
			if os.Getenv("RUNNER_TEST_LOG_SESSIONS") == "1" {
				logSessionFiles(t, home) // finding a CLI's record of its spend
				stateDir, _ := state.DefaultDir(h.getenv)
				ev, _ := os.ReadFile(filepath.Join(stateDir, "events", id+".jsonl"))
				t.Logf("hook events:\n%s", ev)
			}
			if h.prof.Spend == "" {
				// A CLI whose record runner does not read: unknown,
				// never 0.
				if got := task.Spend; got != state.UnknownTurn {
					t.Errorf("%s keeps no record runner reads, yet the spend is %+v; want unknown", cli, got)
				}
				return
			}
			if want.Turns != 1 || want.Input < 2*one.Input {
				t.Fatalf("the mock sent %+v for the turn: want at least the tool call and the answer", want)
			}
			if got := task.Turns[len(task.Turns)-1].Spend; got != want {
				logSessionFiles(t, home)
				stateDir, _ := state.DefaultDir(h.getenv)
				ev, _ := os.ReadFile(filepath.Join(stateDir, "events", id+".jsonl"))
				t.Logf("hook events:\n%s", ev)
				t.Fatalf("turn spend %+v, want what the mock sent %+v", got, want)
			}
			out, errOut, code, _ = h.run("send", id, "--timeout", "3m", "now the SPEND-TWO please")
			if code != 0 {
				h.logAgent(t, id) // its screen: why the send was refused
			}
			task = h.status(id)
			if code != 0 || task.Status != state.StatusDone {
				logTask(t, task)
				t.Fatalf("send: exit %d, %s; want 0, done\n%s%s", code, task.Status, out, errOut)
			}
			want2 := sentUsage(h.srv, "SPEND-TWO", costed, sides)
			if got := task.Turns[len(task.Turns)-1].Spend; got != want2 {
				logSessionFiles(t, home)
				t.Errorf("second turn spend %+v, want what the mock sent %+v", got, want2)
			}
			if sum := want.Add(want2); task.Spend != sum {
				t.Errorf("task spend %+v, want the two turns' %+v", task.Spend, sum)
			}
			_, _, _, _ = h.run("cancel", id, "--kill")
		})
	}
}

// sentUsage sums the usage the mock reported in its replies to the agent's
// own requests (those offering tools; sides: any, a title's too) whose
// latest prompt holds match (or that the turn of that Match answered), as
// one turn's spend (costed: its cost, $0, is known).
func sentUsage(srv *mockapi.Server, match string, costed int, sides bool) state.Spend {
	sp := state.Spend{Turns: 1, Costed: costed}
	for _, r := range srv.Requests() {
		if len(r.Tools) == 0 && !sides || r.Match != match && !strings.Contains(r.Prompt, match) {
			continue
		}
		sp.Input += r.Usage.Input
		sp.Output += r.Usage.Output
		sp.Cached += r.Usage.Cached
	}
	return sp
}

// logSessionFiles logs the tails of the CLIs' session records under home,
// where a turn's spend is read from.
func logSessionFiles(t *testing.T, home string) {
	_ = filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") && !strings.HasSuffix(p, ".json") {
			return nil
		}
		if !strings.Contains(p, "session") && !strings.Contains(p, "chats") && !strings.Contains(p, "projects") && !strings.Contains(p, "tasks") && !strings.Contains(p, "storage") {
			return nil
		}
		b, _ := os.ReadFile(p)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		for i, l := range lines {
			if len(l) > 500 {
				lines[i] = l[:250] + " … " + l[len(l)-250:]
			}
		}
		t.Logf("%s:\n%s", p, strings.Join(lines, "\n"))
		return nil
	})
}
