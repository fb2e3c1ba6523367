package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/gc"
	"github.com/spf13/cobra"
)

func (a *app) newCancelCmd() *cobra.Command {
	var opts cancelOptions
	cmd := &cobra.Command{
		Use:   "cancel ID|GROUP [--kill]",
		Short: "Interrupt a task's agent and mark it cancelled (--kill closes its window and ends its processes)",
		Example: `  runner cancel t_def456
  runner cancel t_stu901 --kill   # also close its window and end its processes
  runner cancel g_abc123 --kill   # every candidate of a group`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runCancel(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.kill, "kill", false, "also close the task's tmux window and end every process it started (as runner gc does)")
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// cancelOptions are the arguments and flags of `runner cancel`.
type cancelOptions struct {
	args   []string
	kill   bool
	asJSON bool
}

func (a *app) runCancel(ctx context.Context, opts cancelOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	if strings.HasPrefix(opts.args[0], "g_") {
		return a.cancelGroup(ctx, env, opts)
	}
	t, err := gc.Cancel(ctx, gcDeps(env), opts.args[0], opts.kill)
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(t)
	}
	fmt.Fprintf(a.out, "%s %s\n", t.ID, t.Status)
	return nil
}

// cancelGroup cancels every candidate of a group still at work (with
// --kill, closes every candidate's window too) and prints them.
func (a *app) cancelGroup(ctx context.Context, env *runner.Env, opts cancelOptions) error {
	out, err := gc.CancelGroup(ctx, gcDeps(env), opts.args[0], opts.kill)
	if out == nil {
		return err
	}
	if opts.asJSON {
		if perr := a.printJSON(out); perr != nil {
			return perr
		}
	} else {
		for _, t := range out {
			fmt.Fprintf(a.out, "%s %s\n", t.ID, t.Status)
		}
	}
	return err
}
