package main

import (
	"context"
	"fmt"
	"io"

	"github.com/runner-cli/runner/internal/textutil"
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

// printDialog prints the dialog d of task id and how to answer it.
func printDialog(w io.Writer, id string, d *dialog.Dialog) {
	fmt.Fprintf(w, "dialog    %s (digest %s)\n", textutil.VisibleLine(d.Question), d.Digest)
	for _, o := range d.Options {
		fmt.Fprintf(w, "  %2s. %s\n", o.Key, textutil.VisibleLine(o.Label))
	}
	if len(d.Options) > 0 {
		fmt.Fprintf(w, "          runner answer %s KEY --digest %s\n", id, d.Digest)
	}
}

// printAnswerReceipts prints the receipts of t's answers.
func printAnswerReceipts(w io.Writer, t *state.Task) {
	for _, r := range t.Answers {
		by := r.By
		if by == "" {
			by = "-"
		}
		fmt.Fprintf(w, "answer    %s  option %s %q %s by %s (op %s, digest %s)\n", r.At.Local().Format("15:04:05.000"),
			r.Option, textutil.VisibleLine(r.Label), r.Result, textutil.VisibleLine(by), r.Op, r.Digest)
	}
}
