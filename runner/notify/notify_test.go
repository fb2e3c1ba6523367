package notify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

func TestMessage(t *testing.T) {
	t.Parallel()
	code := 3
	for _, tc := range []struct {
		task state.Task
		want string
	}{
		{state.Task{ID: "t_a", Status: state.StatusDone, Text: "add a /health endpoint\nwith tests"}, "runner: t_a done: add a /health endpoint"},
		{state.Task{ID: "t_a", Status: state.StatusNeedsInput, Text: "deploy"}, "runner: t_a needs input: deploy"},
		{state.Task{ID: "t_a", Status: state.StatusExited, Text: "x", ExitCode: &code}, "runner: t_a exited (3): x"},
		{state.Task{ID: "t_a", Status: state.StatusCancelled, Text: "  "}, "runner: t_a cancelled"},
		// hostile text stays text: tmuxctl escapes it for the format
		{state.Task{ID: "t_a", Status: state.StatusFailed, Text: "#(rm -rf ~) #{pane_id};"}, "runner: t_a failed: #(rm -rf ~) #{pane_id};"},
	} {
		if got := Message(&tc.task); got != tc.want {
			t.Errorf("Message(%+v) = %q, want %q", tc.task, got, tc.want)
		}
	}
}

// fakeDisplay counts the messages shown.
type fakeDisplay struct {
	shown []string
	err   error
}

func (d *fakeDisplay) DisplayMessage(_ context.Context, session, text string, _ time.Duration) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	d.shown = append(d.shown, session+": "+text)
	return 1, nil
}

// TestTell: the status line first, then the notify command with the task
// in its environment; a failing command is journaled and said, never an
// error; no tmux message when the settings say not.
func TestTell(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "env")
	script := filepath.Join(dir, "notify.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s %s %s %s\\n' \"$RUNNER_TASK_ID\" \"$RUNNER_STATUS\" \"$RUNNER_EXIT\" \"$(cat \"$RUNNER_RESULT_FILE\")\" > "+out+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	disp := &fakeDisplay{}
	var journal, said []string
	n := Teller{
		Tmux:    func(context.Context, *state.Task) (Display, error) { return disp, nil },
		Journal: func(_ context.Context, _ *state.Task, kind, text string) { journal = append(journal, kind+": "+text) },
		Say:     func(f string, a ...any) { said = append(said, f) },
		ResultFile: func(t *state.Task) string {
			p := filepath.Join(dir, t.ID+".result")
			_ = os.WriteFile(p, []byte(t.ResultTail), 0o600)
			return p
		},
		ExitOf: func(t *state.Task) int { return len(t.Status) - 4 }, // "done": 0
	}
	task := &state.Task{ID: "t_a", Status: state.StatusDone, Text: "x", ResultTail: "all good", Tmux: state.TmuxTarget{Session: "s"}}
	n.Tell(t.Context(), task, settings.Run{Notify: []string{script}})
	b, err := os.ReadFile(out)
	if err != nil || strings.TrimSpace(string(b)) != "t_a done 0 all good" {
		t.Errorf("the command saw %q, %v", b, err)
	}
	if len(disp.shown) != 1 || disp.shown[0] != "s: runner: t_a done: x" {
		t.Errorf("status line %q", disp.shown)
	}
	if strings.Join(journal, "|") != "tmux-message: shown to 1 client(s) of session s|notify: "+script+" ran for status done" {
		t.Errorf("journal %q", journal)
	}
	journal, disp.shown = nil, nil
	n.Tell(t.Context(), task, settings.Run{Notify: []string{filepath.Join(dir, "missing")}, NoTmuxMessage: true})
	if len(disp.shown) != 0 || len(journal) != 1 || !strings.HasPrefix(journal[0], "notify-failed: ") || len(said) != 1 {
		t.Errorf("a missing command: shown %q, journal %q, said %q", disp.shown, journal, said)
	}
	journal = nil
	disp.err = errors.New("no server running")
	n.Tell(t.Context(), task, settings.Run{})
	if len(journal) != 0 {
		t.Errorf("a failed status line is journaled: %q", journal)
	}
}

// TestImports keeps the package doc true: it reaches tmux and the journal
// only through Teller.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "runner/config", "runner/settings", "state", "tmuxctl")
}
