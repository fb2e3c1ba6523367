package main

import (
	"context"
	"io"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/answer"
	"github.com/runner-cli/runner/runner/dialog"
	"github.com/runner-cli/runner/state"
)

// statusJSON is status --json's answer: the task's record, with the
// dialog it waits on (needs_input) and, with --screen, its pane's
// visible text.
type statusJSON struct {
	*state.Task
	Dialog *dialog.Dialog `json:"dialog,omitempty"`
	Screen *string        `json:"screen,omitempty"`
}

// taskScreen is the visible text of t's pane, escapes stripped; ok is
// false when it cannot be read (answer.Screen).
func taskScreen(ctx context.Context, env *runner.Env, t *state.Task) (string, bool) {
	return answer.Screen(ctx, answerDeps(env), t)
}

// taskDialog reads the dialog of a needs_input task off screen
// (answer.Waiting).
func taskDialog(env *runner.Env, t *state.Task, screen string) (*dialog.Dialog, bool) {
	return answer.Waiting(answerDeps(env), t, screen)
}

// printDialog prints the dialog d of task id and how to answer it
// (answer.WriteDialog).
func printDialog(w io.Writer, id string, d *dialog.Dialog) { answer.WriteDialog(w, id, d) }

// printAnswerReceipts prints the receipts of t's answers
// (answer.WriteReceipts).
func printAnswerReceipts(w io.Writer, t *state.Task) { answer.WriteReceipts(w, t) }
