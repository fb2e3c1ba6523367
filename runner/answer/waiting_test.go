package answer

import (
	"context"
	"errors"
	"testing"

	"github.com/runner-cli/runner/state"
)

// TestWaiting: a needs_input task's dialog is read off its screen with
// its options; a task that is not waiting, an agent with no profile and
// a screen with no dialog give none.
func TestWaiting(t *testing.T) {
	pane := &simPane{question: "Ship it?"}
	d, _, digest := setup(t, pane)
	tk := &state.Task{ID: "t_answer0001", Agent: "sim", Status: state.StatusNeedsInput, Tmux: state.TmuxTarget{Pane: "%1"}}
	screen, ok := Screen(context.Background(), d, tk)
	if !ok {
		t.Fatal("no screen")
	}
	dl, ok := Waiting(d, tk, screen)
	if !ok || dl.Digest != digest || len(dl.Options) != 2 || dl.Options[1].Label != "No" {
		t.Fatalf("dialog %+v, %v", dl, ok)
	}
	running := *tk
	running.Status = state.StatusRunning
	if _, ok := Waiting(d, &running, screen); ok {
		t.Error("a dialog for a running task")
	}
	if _, ok := Waiting(d, tk, "$ \n"); ok {
		t.Error("a dialog on a shell prompt")
	}
	d.Agent = fakeAgent{pane: pane, profErr: errors.New("no profile")}
	if _, ok := Waiting(d, tk, screen); ok {
		t.Error("a dialog with no profile")
	}
}

// TestScreenUnread: no pane, or one that cannot be reached, is no screen.
func TestScreenUnread(t *testing.T) {
	d, _, _ := setup(t, &simPane{question: "?"})
	if _, ok := Screen(context.Background(), d, &state.Task{ID: "t_answer0001"}); ok {
		t.Error("a screen for a task with no pane")
	}
	d.Agent = fakeAgent{paneErr: errors.New("gone")}
	if _, ok := Screen(context.Background(), d, &state.Task{ID: "t_answer0001", Tmux: state.TmuxTarget{Pane: "%1"}}); ok {
		t.Error("a screen for a pane that cannot be reached")
	}
}
