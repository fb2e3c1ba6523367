package main

import (
	"github.com/runner-cli/runner/runner"
	"github.com/spf13/cobra"
)

func (a *app) newTreeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tree [ID]",
		Short: "Show the task hierarchy (parents and the sub-tasks they dispatched) with statuses",
		Long: `A task dispatched from inside another task's pane is its child (level + 1).
'runner tree' shows every root task and its descendants; 'runner tree ID' one subtree.`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, _, err := a.runnerEnv(false)
			if err != nil {
				return err
			}
			root := ""
			if len(argv) == 1 {
				root = argv[0]
			}
			nodes, err := runner.Tree(cmd.Context(), env, root)
			if err != nil {
				return err
			}
			if asJSON {
				if nodes == nil {
					nodes = []*runner.TreeNode{}
				}
				return a.printJSON(nodes)
			}
			runner.PrintTree(a.out, nodes)
			return nil
		},
	}
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func (a *app) newCollectCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "collect PARENT",
		Short: "Each child task's outcome and result tail, and whether all are finished",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, _, err := a.runnerEnv(false)
			if err != nil {
				return err
			}
			c, err := runner.Collect(cmd.Context(), env, argv[0])
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(c)
			}
			runner.PrintCollection(a.out, c)
			return nil
		},
	}
	a.jsonFlag(cmd, &asJSON)
	return cmd
}
