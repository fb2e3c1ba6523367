package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/tasks"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

// waitOptions are the flags of runner wait.
type waitOptions struct {
	ids                     []string
	anyOne, untilInput, all bool
	project                 string
	timeout                 time.Duration
	asJSON, answer          bool
}

func (a *app) newWaitCmd() *cobra.Command {
	var o waitOptions
	cmd := &cobra.Command{
		Use:   "wait ID... [--any] [--timeout D] | wait GROUP | wait --all [--project P]",
		Short: "Block until tasks end; exit with the task's code",
		Long: `Block until the tasks end (with --any: the first of them), watching the state
directory (no polling). Exits with the task's code: 0 done, 1 failed or exited,
3 timed out, 4 needs input (with --input, waiting for input also ends the
wait). With several tasks the exit code is that of the first one, in argument
order, that did not end done. --timeout ends the wait itself with exit 3.

With --all (and no IDs): wait for every active task (of project P with
--project) at the time of the call, and for the tasks queued behind them
with --after, until all have ended. The exit code is that of the first task,
in dispatch order, that did not end done; 0 when there was nothing to wait for.

With GROUP (dispatch --agents/--tries): wait until the group has ended (its
candidates, their checks and its vote), print the comparison, and exit as a
foreground group does: 0 every candidate succeeded, 8 some did, 1 none did, 6
its group budget stopped it.`,
		Example: `  runner wait t_abc123
  runner wait t_ghi789           # exits 1: the task did not end done
  runner wait --all --project api --timeout 1h
  runner wait --any t_def456 t_abc123   # returns when the first ends`,
		Args: args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, argv []string) error {
			o.ids = argv
			return a.runWait(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.anyOne, "any", false, "return when the first task ends")
	cmd.Flags().BoolVar(&o.untilInput, "input", false, "also end the wait when a task needs input")
	cmd.Flags().BoolVar(&o.all, "all", false, "wait for every active task and the tasks queued behind them")
	cmd.Flags().StringVar(&o.project, "project", "", "with --all, only the tasks of this project: a registered name or a directory")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 0, "give up waiting after this long (exit 3)")
	a.jsonFlag(cmd, &o.asJSON)
	answerFlag(cmd, &o.answer)
	return cmd
}

// runWait is runner wait: check the flags, wait, print, and exit with the
// first task's code that did not end done.
func (a *app) runWait(ctx context.Context, o waitOptions) error {
	switch {
	case o.all && len(o.ids) > 0:
		return fault.Usagef("wait: give task IDs or --all, not both")
	case o.all && (o.anyOne || o.untilInput):
		return fault.Usagef("wait --all: --any and --input go with task IDs")
	case !o.all && o.project != "":
		return fault.Usagef("wait: --project goes with --all")
	case !o.all && len(o.ids) == 0:
		return fault.Usagef("wait: give task IDs, or --all for every active task")
	case len(o.ids) == 1 && strings.HasPrefix(o.ids[0], "g_"):
		return a.waitGroup(ctx, o)
	}
	// --all says on stderr which tasks it waits for.
	env, _, err := a.runnerEnv(o.all)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(ctx, o.timeout)
	defer cancel()
	var list []*state.Task
	if o.all {
		list, err = tasks.All(ctx, tasksDeps(env), o.project)
	} else {
		list, err = tasks.Wait(ctx, tasksDeps(env), o.ids, tasks.WaitOptions{Any: o.anyOne, UntilInput: o.untilInput})
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("wait: tasks still running after %s: %w", o.timeout, tmuxctl.ErrTimeout)
		}
		return err
	}
	code := 0
	for _, t := range list {
		// Only tasks that ended the wait count: with --any the others
		// are still running (or waiting for input without --input).
		ended := t.Status.IsTerminal() || t.Status == state.StatusOrphaned || (o.untilInput && t.Status == state.StatusNeedsInput)
		if c := exitcode.OfTask(t); code == 0 && c != 0 && ended {
			code = c
		}
	}
	switch {
	case o.answer:
		a.printAnswers(list...)
	case o.asJSON:
		if list == nil {
			list = []*state.Task{}
		}
		if err := a.printJSON(list); err != nil {
			return err
		}
	default:
		for _, t := range list {
			fmt.Fprintf(a.out, "%s %s\n", t.ID, t.Status)
		}
	}
	if code != 0 {
		return &exitcode.Error{Code: code}
	}
	return nil
}
