package main

import (
	"context"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/mailbox"
	"github.com/runner-cli/runner/runner/tasks"
	"github.com/runner-cli/runner/state"
	"github.com/spf13/cobra"
)

func (a *app) newPsCmd() *cobra.Command {
	var opts psOptions
	cmd := &cobra.Command{
		Use:   "ps [--all] [--project P] [--host H]",
		Short: "List tasks (active ones; --all for finished too)",
		Long: `List tasks, newest first. Every call reconciles the state with the live
panes and supervisors: a task whose supervisor is gone becomes orphaned (resume
it with 'runner resume ID') or, when its pane is gone too, failed. ps never
contacts a host: tasks on every host are listed together (a HOST column names
each one's; a task waiting for a pool shows the pool), from the state here.`,
		Example: `  runner ps
  runner ps --all --project api
  runner ps --host local        # this machine's only (--host NAME: that host's)
  runner ps --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runPs(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.all, "all", false, "include finished tasks")
	cmd.Flags().StringVar(&opts.project, "project", "", "only tasks of this project: a registered name or a directory (./a, /x/b)")
	cmd.Flags().StringVar(&opts.host, "host", "", "only tasks on this host (local: this machine's)")
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// psOptions are the arguments and flags of `runner ps`.
type psOptions struct {
	all     bool
	project string
	host    string
	asJSON  bool
}

func (a *app) runPs(ctx context.Context, opts psOptions) error {
	env, cfg, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	defer a.startAutoGC(ctx, env, cfg)
	list, err := tasks.List(ctx, tasksDeps(env), tasks.ListOptions{All: opts.all, Project: opts.project, Host: opts.host})
	if err != nil {
		return err
	}
	if err := tasks.MarkGroups(ctx, env.Store, list); err != nil {
		return err
	}
	if opts.asJSON {
		if list == nil {
			list = []*state.Task{}
		}
		return a.printJSON(list)
	}
	return tasks.WriteList(a.out, list, clock.Now())
}

func (a *app) newStatusCmd() *cobra.Command {
	var opts statusOptions
	cmd := &cobra.Command{
		Use:   "status ID",
		Short: "Show a task: lifecycle with times and reasons, snapshot, delivery, result",
		Long: `Show a task: its lifecycle with times and reasons, where it runs, its
snapshot, delivery and result. A task waiting for input (needs_input) shows
the dialog on its screen: the line that asks, its numbered options and its
digest, which 'runner answer' takes; --json has it as "dialog": {"digest",
"question", "options": [{"key", "label"}]}. --screen adds the pane's visible
text to the JSON ("screen").`,
		Example: `  runner status t_abc123
  runner status t_abc123 --json
  runner status t_jkl012 --json --screen`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runStatus(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	cmd.Flags().BoolVar(&opts.screen, "screen", false, "with --json: add the pane's visible text (\"screen\")")
	return cmd
}

// statusOptions are the arguments and flags of `runner status`.
type statusOptions struct {
	args   []string
	asJSON bool
	screen bool
}

func (a *app) runStatus(ctx context.Context, opts statusOptions) error {
	env, cfg, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	defer a.startAutoGC(ctx, env, cfg)
	t, err := runner.GetTask(ctx, env, opts.args[0])
	if err != nil {
		return err
	}
	out := statusJSON{Task: t}
	if t.Status == state.StatusNeedsInput || opts.screen {
		if screen, ok := taskScreen(ctx, env, t); ok {
			out.Dialog, _ = taskDialog(env, t, screen)
			if opts.screen {
				out.Screen = &screen
			}
		}
	}
	if opts.asJSON {
		return a.printJSON(out)
	}
	a.printStatus(ctx, env, t)
	if out.Dialog != nil {
		printDialog(a.out, t.ID, out.Dialog)
	}
	printAnswerReceipts(a.out, t)
	return nil
}

// printStatus prints runner status of task t: its lifecycle, where it
// runs, what it produced.
func (a *app) printStatus(ctx context.Context, env *runner.Env, t *state.Task) {
	// GetTask reconciled already: the state as it is is enough.
	var msgs []mailbox.Entry
	st, _ := env.Store.Read(ctx)
	if st != nil {
		msgs, _ = mailbox.InboxOf(st, t.ID)
	}
	tasks.WriteStatus(a.out, t, st, msgs)
}
