//go:build realagents

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/state"
)

// clineKiloApprove is the --approve-rule for the approval each asks in
// --permissions ask before writing approved.txt: Cline's "Cline needs
// permission / Approve tool call? / editor / PATH", Kilo's (OpenCode's)
// "Permission required / → Edit approved.txt".
var clineKiloApprove = map[string]string{
	"cline": `(?s)Approve tool call\?.*approved\.txt`,
	"kilo":  `(?s)Permission required.*approved\.txt`,
}

// TestRealAgentsClineKilo runs Cline CLI and Kilo Code CLI (issue 54)
// through the model mock from a fresh HOME (only the provider settings a
// user writes once) in a folder they have never seen (neither asks about
// it): in --permissions ask a turn whose model answer writes a file through
// the CLI's own tool stops on its approval, answered by --approve-rule
// (exit 0, done after the final answer streamed, the file written, the
// answer recorded; Kilo's turn ended by its plugin), a message turn to the
// idle agent, and the same without a rule: exit 4 with the question,
// nothing written.
func TestRealAgentsClineKilo(t *testing.T) {
	for _, cli := range []string{"cline", "kilo"} {
		t.Run(cli, func(t *testing.T) {
			needCLI(t, cli)
			realClineKilo(t, cli)
		})
	}
}

// TestRealAgentsClineKiloSandbox: --permissions auto under --sandbox, for
// Cline CLI and Kilo Code CLI, TestRealAgentsAutoSandbox's whole sequence
// (an edit and a shell command in the folder done, writes outside
// refused, runner reached through the door, the session resumed after
// gc). Kilo ran its first turn only until its ready row in auto mode
// ("Code  auto · …") was read as ready: the send after it was refused.
func TestRealAgentsClineKiloSandbox(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("RUNNER_REAL_AGENTS_REQUIRED") == "1" {
			t.Fatal("bwrap not on PATH (apt-get install bubblewrap)")
		}
		t.Skip("bwrap not on PATH")
	}
	t.Run("cline", func(t *testing.T) { realAuto(t, "cline", true) })
	t.Run("kilo", func(t *testing.T) { realAuto(t, "kilo", true) })
}

func realClineKilo(t *testing.T, cli string) {
	home, project := mockapi.Home(t), agentTempDir(t)
	approved, asked := filepath.Join(project, "approved.txt"), filepath.Join(project, "asked.txt")
	first := mockapi.Turn{Match: "APPROVE-TASK", Write: &mockapi.FileWrite{Path: approved, Content: "hi from the mock\n"},
		Text: finalWords, ChunkDelay: 150 * time.Millisecond}
	second := mockapi.Turn{Match: "ASK-TASK", Write: &mockapi.FileWrite{Path: asked, Content: "hi from the mock\n"}, Text: "not reached"}
	message := mockapi.Turn{Match: "MESSAGE-TASK", Text: "REAL-MESSAGE-DONE", ChunkDelay: 50 * time.Millisecond}
	h := newRealHarness(t, cli, home, project, []mockapi.Turn{message, first, second})
	defer watchCmdlines(t, mockapi.MockAPIKey)()
	defer func() {
		if t.Failed() {
			t.Logf("mock requests:\n%s", h.mlog.String())
		}
	}()
	rule := clineKiloApprove[cli]
	base := []string{"dispatch", project, "--agent", cli, "--permissions", "ask", "--timeout", "6m", "--ready-timeout", "3m"}

	out, errOut, code, took := h.run(append(base, "--approve-rule", rule, "please do the APPROVE-TASK now")...)
	t.Logf("%s dispatch --permissions ask --approve-rule: exit %d in %s\nstdout:\n%s\nstderr:\n%s", cli, code, took.Round(100*time.Millisecond), out, errOut)
	id := h.taskID(out)
	task := h.status(id)
	logTask(t, task)
	if code != 0 || task.Status != state.StatusDone {
		t.Errorf("exit %d, status %s; want 0, done", code, task.Status)
	}
	if b, err := os.ReadFile(approved); err != nil || string(b) != "hi from the mock\n" {
		t.Errorf("the approved tool call did not write %s: %q, %v", approved, b, err)
	}
	if !strings.Contains(task.Answer+task.ResultTail, "REAL-DISPATCH-DONE") {
		t.Errorf("done before the final answer ended: answer %q, result tail:\n%s", task.Answer, task.ResultTail)
	}
	if cli == "cline" && strings.TrimSpace(task.Answer) != finalWords {
		t.Errorf("Cline's answer %q, want its session record's, whole: %q", task.Answer, finalWords)
	}
	stateDir, err := state.DefaultDir(h.getenv)
	if err != nil {
		t.Fatal(err)
	}
	if answers := journalKinds(t, filepath.Join(stateDir, state.JournalFile), id, "auto-answer"); len(answers) == 0 {
		t.Errorf("no auto-answer in the journal for %s", id)
	} else {
		t.Logf("journal auto-answer: %q", answers)
	}
	if h.prof.Hook != nil && !strings.Contains(lastReason(task), "(hook)") {
		t.Errorf("the turn ended by %q, want the %s hook", lastReason(task), cli)
	}

	// A message to the idle agent: a turn of its own.
	out, errOut, code, _ = h.run("msg", id, "please handle the MESSAGE-TASK now")
	if code != 0 {
		t.Errorf("runner msg: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code, took = h.run("wait", "--timeout", "3m", id)
	task = h.status(id)
	t.Logf("%s message turn: wait exit %d in %s\n%s%s", cli, code, took.Round(100*time.Millisecond), out, errOut)
	if code != 0 || task.Status != state.StatusDone || !strings.Contains(task.Answer+task.ResultTail, "REAL-MESSAGE-DONE") {
		t.Errorf("message turn: exit %d, status %s, answer %q", code, task.Status, task.Answer)
		logTask(t, task)
	}
	h.agentAlive(t, id)
	if t.Failed() {
		h.logAgent(t, id)
	}
	_, _, _, _ = h.run("cancel", id, "--kill")

	// Without a rule: the question, exit 4, nothing written.
	out, errOut, code, took = h.run(append(base, "please do the ASK-TASK now")...)
	t.Logf("%s dispatch without a rule: exit %d in %s\nstdout:\n%s\nstderr:\n%s", cli, code, took.Round(100*time.Millisecond), out, errOut)
	id = h.taskID(out)
	task = h.status(id)
	if code != 4 || task.Status != state.StatusNeedsInput {
		t.Errorf("exit %d, status %s; want 4, needs_input", code, task.Status)
	}
	if !regexp.MustCompile(`asked\.txt`).MatchString(task.Question) {
		t.Errorf("question %q is not the %s approval of asked.txt", task.Question, cli)
	}
	if _, err := os.Stat(asked); err == nil {
		t.Errorf("%s was written although nobody approved it", asked)
	}
	if t.Failed() {
		h.logAgent(t, id)
	}
	_, _, _, _ = h.run("cancel", id, "--kill")
}
