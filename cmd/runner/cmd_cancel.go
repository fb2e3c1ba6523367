package main

import (
	"fmt"

	"github.com/runner-cli/runner/runner"
	"github.com/spf13/cobra"
)

func (a *app) newCancelCmd() *cobra.Command {
	var (
		kill   bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "cancel ID [--kill]",
		Short: "Interrupt a task's agent and mark it cancelled (--kill closes its window and ends its processes)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, _, err := a.runnerEnv(false)
			if err != nil {
				return err
			}
			t, err := runner.Cancel(cmd.Context(), env, argv[0], kill)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(t)
			}
			fmt.Fprintf(a.out, "%s %s\n", t.ID, t.Status)
			return nil
		},
	}
	cmd.Flags().BoolVar(&kill, "kill", false, "also close the task's tmux window and end every process it started (as runner gc does)")
	a.jsonFlag(cmd, &asJSON)
	return cmd
}
