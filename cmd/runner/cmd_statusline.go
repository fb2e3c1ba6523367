package main

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/runner/notify"
	"github.com/spf13/cobra"
)

func (a *app) newStatusLineCmd() *cobra.Command {
	var opts statusLineOptions
	cmd := &cobra.Command{
		Use:   "status-line [--json]",
		Short: "One line of counts of the active tasks, for tmux's status-right",
		Long: `status-line prints how many tasks need input, are orphaned, running, ready,
starting or queued, in that order ("runner idle" when none is active), on one
line for tmux's status bar:

  set -g status-right '#(runner status-line)'
  set -g status-interval 5

It reads only the state's index (no task record, no tmux call), so it costs the
same however many finished tasks are retained. --json prints the counts by
status.`,
		Example: `  runner status-line
  runner status-line --json
  # in ~/.tmux.conf: set -g status-right '#(runner status-line)'`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runStatusLine(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// statusLineOptions are the arguments and flags of `runner status-line`.
type statusLineOptions struct {
	asJSON bool
}

func (a *app) runStatusLine(ctx context.Context, opts statusLineOptions) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	counts, err := s.Counts(ctx)
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(counts)
	}
	fmt.Fprintln(a.out, notify.StatusLine(counts))
	return nil
}
