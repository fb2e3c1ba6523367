package main

import (
	"context"
	"errors"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/answer"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/open"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/state"
	"github.com/spf13/cobra"
)

func (a *app) newAnswerCmd() *cobra.Command {
	var opts answerOptions
	cmd := &cobra.Command{
		Use:   "answer ID OPTION --digest D",
		Short: "Answer a task's dialog with one of its options, only if it still shows that dialog",
		Long: `Press OPTION (its key: 1, 2, …) in the dialog task ID waits on, only if the
task is needs_input and its pane still shows the dialog whose digest is D
('runner status ID' shows the dialog, its options and its digest; 'status
--json' has them under "dialog"). Anything else presses nothing: a task that
is not waiting, a screen with no dialog or another one (exit 5), an option
the dialog does not have (exit 2).

The option is chosen by its label: the menu's cursor is moved onto it, and
the screen read again and its digest checked right before Enter (an agent
whose profile names no menu cursor gets the option's key alone). An answer
is idempotent by its operation id (--op; one is made when omitted): the same
id again prints the first receipt ("duplicate": true) and presses nothing,
however many ask at once. The receipt (op, option, label, digest, by, at,
result) goes into the task's record (status shows it) and the journal. A
task no supervisor follows any more (a dispatch that exited 4) gets one after
the press, which follows it to its end ('runner wait ID').`,
		Example: `  runner status t_jkl012    # its dialog: the question, options 1 and 2, the digest
  runner answer t_jkl012 1 --digest 0123456789abcdef --op ship-1    # exits 5: not its dialog's digest, nothing pressed`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runAnswer(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.digest, "digest", "", "the digest of the dialog answered (from 'runner status'; required)")
	cmd.Flags().StringVar(&opts.op, "op", "", "the operation `ID`: the same id is pressed once (default: a new one)")
	cmd.Flags().StringVar(&opts.by, "by", "", "who answers, for the receipt (default: $USER)")
	a.jsonFlag(cmd, &opts.asJSON, "print the receipt as JSON")
	return cmd
}

// answerOptions are the arguments and flags of `runner answer`.
type answerOptions struct {
	args           []string
	digest, op, by string
	asJSON         bool
}

func (a *app) runAnswer(ctx context.Context, opts answerOptions) error {
	if opts.digest == "" {
		return fault.Usagef("answer: --digest is required: read it with 'runner status %s'", opts.args[0])
	}
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	t, err := runner.GetTask(ctx, env, opts.args[0])
	if err != nil {
		return err
	}
	by := opts.by
	if by == "" {
		by = a.getenv("USER")
	}
	rc, err := answer.Answer(ctx, answerDeps(env), answer.Request{Task: t.ID, Option: opts.args[1], Digest: opts.digest, Op: opts.op, By: by})
	if rc.Op == "" {
		return err
	}
	refused := errors.Is(err, answer.ErrStale) || errors.Is(err, fault.ErrUsage)
	if refused && !rc.Duplicate {
		rc.Result = "refused"
	}
	if opts.asJSON {
		if perr := a.printJSON(rc); perr != nil {
			return perr
		}
		return err
	}
	if err != nil {
		return err
	}
	answer.WriteReceipt(a.out, rc)
	return nil
}

// answerDeps is what an answer uses of env: the state, the task's pane
// and profile, the journal, and resume for a task no supervisor follows.
func answerDeps(env *runner.Env) answer.Deps {
	return answer.Deps{Store: env.Store, Now: env.Now, Agent: answerAgent{env}, Journal: env.Record(),
		Supervision: answer.Following(open.Core{Env: env}, reconcile.SupervisorAlive)}
}

// answerAgent is a task's agent as env reaches it: its pane's tmux server
// (here or on its host) and its profile.
type answerAgent struct{ env *runner.Env }

func (a answerAgent) Pane(ctx context.Context, t *state.Task) (answer.Pane, error) {
	return a.env.PaneClient(ctx, t)
}

func (a answerAgent) Profile(t *state.Task) (*profile.Profile, error) {
	return profile.FindProfile(a.env.Profiles, t.Agent)
}
