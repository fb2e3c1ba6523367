package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/state"
	"github.com/spf13/cobra"
)

// statusLineOrder is the order of the status line's parts: what needs the
// user first.
var statusLineOrder = []struct {
	status state.Status
	label  string
}{
	{state.StatusNeedsInput, "needs input"},
	{state.StatusOrphaned, "orphaned"},
	{state.StatusRunning, "running"},
	{state.StatusReady, "ready"},
	{state.StatusStarting, "starting"},
	{state.StatusQueued, "queued"},
}

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
	fmt.Fprintln(a.out, statusLine(counts))
	return nil
}

// statusLine renders the counts of the active statuses.
func statusLine(counts map[state.Status]int) string {
	var parts []string
	for _, p := range statusLineOrder {
		if n := counts[p.status]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, p.label))
		}
	}
	if len(parts) == 0 {
		return "runner idle"
	}
	return "runner " + strings.Join(parts, " · ")
}
