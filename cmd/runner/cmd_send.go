package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/runner-cli/runner/runner/exit"

	"github.com/runner-cli/runner/runner"
	"github.com/spf13/cobra"
)

func (a *app) newSendCmd() *cobra.Command {
	var (
		file    string
		detach  bool
		timeout time.Duration
		asJSON  bool
		answer  bool
	)
	cmd := &cobra.Command{
		Use:   "send ID [TEXT]",
		Short: "Give a task's agent a follow-up prompt and wait for that turn",
		Long: `Deliver TEXT (or --file F / --file -) to the agent of a task whose last turn
ended, and wait for the new turn like dispatch does (exit code = outcome). With
--detach a supervisor waits and send returns at once.`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			text, err := a.readText(argv[1:], file)
			if err != nil {
				return err
			}
			env, _, err := a.runnerEnv(!asJSON)
			if err != nil {
				return err
			}
			var set *runner.RunSettings
			if timeout > 0 {
				t, err := runner.GetTask(cmd.Context(), env, argv[0])
				if err != nil {
					return err
				}
				var s runner.RunSettings
				_ = json.Unmarshal(t.Settings, &s)
				s.Timeout = timeout
				set = &s
			}
			if answer && (asJSON || detach) {
				return exit.Usagef("--print-answer waits for the answer: not with --json or --detach")
			}
			t, err := runner.Send(cmd.Context(), env, runner.SendRequest{Ref: argv[0], Text: text, Detach: detach, Settings: set})
			if t == nil {
				return err
			}
			if answer && !errors.Is(err, exit.ErrUsage) {
				a.printAnswers(t)
				if err != nil {
					return &exit.ExitError{Code: exitCode(err), Err: err}
				}
				return nil
			}
			if asJSON {
				if perr := a.printJSON(t); perr != nil {
					return perr
				}
				if err != nil {
					return &exit.ExitError{Code: exitCode(err)}
				}
				return nil
			}
			if errors.Is(err, exit.ErrUsage) {
				return err
			}
			if detach && err == nil {
				fmt.Fprintln(a.out, t.ID)
				return nil
			}
			a.printOutcome(t)
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "read the text from file F ('-' for standard input)")
	cmd.Flags().BoolVarP(&detach, "detach", "d", false, "return at once; a supervisor waits for the turn")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up on this turn after this long (default: the task's)")
	a.jsonFlag(cmd, &asJSON)
	answerFlag(cmd, &answer)
	return cmd
}

func (a *app) newResumeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resume ID",
		Short: "Start a new supervisor for an orphaned task (or one left waiting for input)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, _, err := a.runnerEnv(false)
			if err != nil {
				return err
			}
			t, pid, err := runner.Resume(cmd.Context(), env, argv[0])
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(t)
			}
			fmt.Fprintf(a.out, "%s resumed: supervisor %d (runner wait %s)\n", t.ID, pid, t.ID)
			return nil
		},
	}
	a.jsonFlag(cmd, &asJSON)
	return cmd
}
