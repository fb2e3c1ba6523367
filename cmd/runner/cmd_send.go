package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/runner/budget"
	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/runner"
	"github.com/spf13/cobra"
)

func (a *app) newSendCmd() *cobra.Command {
	var opts sendOptions
	cmd := &cobra.Command{
		Use:   "send ID [TEXT]",
		Short: "Give a task's agent a follow-up prompt and wait for that turn",
		Long: `Deliver TEXT (or --file F / --file -) to the agent of a task whose last turn
ended, and wait for the new turn like dispatch does (exit code = outcome). With
--detach a supervisor waits and send returns at once; the turn is held to the
task's budgets all the same.

The agent must be at its prompt. A view that hides the prompt (Codex's
transcript browsing, left by a user who attached) is left first with the
profile's leave keys. An agent whose window was closed (gc, cancel --kill) or
that quit after its last turn is started again on its conversation (the
profile's resume arguments and the task's agent session); send says why, with
the exit status it quit with, and so does the task's history.`,
		Example: `  runner send t_abc123 "now add a test for it"
  runner send t_abc123 --detach --file followup.md`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runSend(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.file, "file", "f", "", "read the text from file F ('-' for standard input)")
	cmd.Flags().BoolVarP(&opts.detach, "detach", "d", false, "return at once; a supervisor waits for the turn")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", 0, "give up on this turn after this long (default: the task's)")
	cmd.Flags().IntVar(&opts.maxTurns, "max-turns", -1, "the task's turn budget from now on (its tree's turns counted; 0: none)")
	cmd.Flags().Int64Var(&opts.budgetTokens, "budget-tokens", -1, "the task's token budget from now on (its tree's tokens counted; 0: none)")
	cmd.Flags().Float64Var(&opts.budgetUSD, "budget-usd", -1, "the task's dollar budget from now on (its tree's cost counted; 0: none)")
	a.jsonFlag(cmd, &opts.asJSON)
	answerFlag(cmd, &opts.answer)
	return cmd
}

// sendOptions are the arguments and flags of `runner send`.
type sendOptions struct {
	args    []string
	file    string
	detach  bool
	timeout time.Duration
	asJSON  bool
	answer  bool
	// maxTurns, budgetTokens and budgetUSD are -1 when not given.
	maxTurns     int
	budgetTokens int64
	budgetUSD    float64
}

func (a *app) runSend(ctx context.Context, opts sendOptions) error {
	text, err := a.readText(opts.args[1:], opts.file)
	if err != nil {
		return err
	}
	env, _, err := a.runnerEnv(!opts.asJSON)
	if err != nil {
		return err
	}
	ov := budget.Overrides{Timeout: opts.timeout, MaxTurns: opts.maxTurns, Tokens: opts.budgetTokens, USD: opts.budgetUSD}
	set, err := ov.For(ctx, envTasks{env}.GetTask, opts.args[0], env.Profiles)
	if err != nil {
		return err
	}
	if opts.answer && (opts.asJSON || opts.detach) {
		return fault.Usagef("--print-answer waits for the answer: not with --json or --detach")
	}
	t, err := runner.Send(ctx, env, runner.SendRequest{Ref: opts.args[0], Text: text, Detach: opts.detach, Settings: set})
	if t == nil {
		return err
	}
	if opts.answer && !errors.Is(err, fault.ErrUsage) {
		a.printAnswers(t)
		if err != nil {
			return &exitcode.Error{Code: exitcode.Of(err), Err: err}
		}
		return nil
	}
	if opts.asJSON {
		if perr := a.printJSON(t); perr != nil {
			return perr
		}
		if err != nil {
			return &exitcode.Error{Code: exitcode.Of(err)}
		}
		return nil
	}
	if errors.Is(err, fault.ErrUsage) {
		return err
	}
	if opts.detach && err == nil {
		fmt.Fprintln(a.out, t.ID)
		return nil
	}
	a.printOutcome(t)
	return err
}

func (a *app) newResumeCmd() *cobra.Command {
	var opts resumeOptions
	cmd := &cobra.Command{
		Use:     "resume ID",
		Short:   "Start a new supervisor for an orphaned task (or one left waiting for input)",
		Example: `  runner resume t_jkl012`,
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runResume(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// resumeOptions are the arguments and flags of `runner resume`.
type resumeOptions struct {
	args   []string
	asJSON bool
}

func (a *app) runResume(ctx context.Context, opts resumeOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	t, pid, err := runner.Resume(ctx, env, opts.args[0])
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(t)
	}
	fmt.Fprintf(a.out, "%s resumed: supervisor %d (runner wait %s)\n", t.ID, pid, t.ID)
	return nil
}
