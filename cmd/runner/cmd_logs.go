package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/tasks"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

func (a *app) newLogsCmd() *cobra.Command {
	var opts logsOptions
	cmd := &cobra.Command{
		Use:   "logs ID [-f] [--raw]",
		Short: "Print a task's transcript (escapes stripped unless --raw)",
		Example: `  runner logs t_abc123
  runner logs t_abc123 --raw
  runner logs t_def456 -f    # until the task ends, or Ctrl-C`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runLogs(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.follow, "follow", "f", false, "keep printing until the task ends")
	cmd.Flags().BoolVar(&opts.raw, "raw", false, "keep terminal escape sequences")
	return cmd
}

// logsOptions are the arguments and flags of `runner logs`.
type logsOptions struct {
	args   []string
	follow bool
	raw    bool
}

func (a *app) runLogs(ctx context.Context, opts logsOptions) error {
	env, t, err := a.envTask(ctx, opts.args[0])
	if err != nil {
		return err
	}
	return tasks.CopyLog(ctx, envTasks{env}, t, opts.follow, func(b []byte, last bool) {
		switch {
		case opts.raw:
			_, _ = a.rawOut.Write(b)
		default: // the chunk read after the end too (it kept its \r\n once)
			_, _ = io.WriteString(a.out, tmuxctl.StripEscapes(strings.ReplaceAll(string(b), "\r\n", "\n")))
		}
	})
}

// envTasks reads a task on the Env (runner.GetTask): as tasks.CopyLog
// reads it again, as send reads it for its overrides.
type envTasks struct{ env *runner.Env }

func (l envTasks) GetTask(ctx context.Context, ref string) (*state.Task, error) {
	return runner.GetTask(ctx, l.env, ref)
}

func (a *app) newAttachCmd() *cobra.Command {
	var opts attachOptions
	cmd := &cobra.Command{
		Use:   "attach ID|PROJECT",
		Short: "Attach your terminal to a task's pane (or a project's session) with tmux",
		Long: `Attach to the task's window with tmux (switch-client when already inside tmux).
Detach again with the tmux prefix key and d (C-b d by default). A task on a host
is attached over ssh (ssh -t HOST tmux attach-session there). With --print, only
print the command.`,
		Example: `  runner attach t_abc123
  runner attach api                 # the project's tmux session
  runner attach t_abc123 --print    # only print the tmux command`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runAttach(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.printOnly, "print", false, "print the tmux command instead of running it")
	return cmd
}

// attachOptions are the arguments and flags of `runner attach`.
type attachOptions struct {
	args      []string
	printOnly bool
}

func (a *app) runAttach(ctx context.Context, opts attachOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	inside := a.getenv("TMUX") != ""
	tmuxArgv, err := tasks.AttachArgv(ctx, tasksDeps(env), opts.args[0], inside)
	if err != nil {
		return err
	}
	if opts.printOnly {
		fmt.Fprintln(a.out, strings.Join(tmuxArgv, " "))
		return nil
	}
	if fi, err := os.Stdin.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return fault.Usagef("attach needs a terminal; run: %s", strings.Join(tmuxArgv, " "))
	}
	return tmuxctl.Exec(tmuxArgv)
}
