package main

import (
	"context"

	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/tasks"
	"github.com/spf13/cobra"
)

func (a *app) newTreeCmd() *cobra.Command {
	var opts treeOptions
	cmd := &cobra.Command{
		Use:   "tree [ID]",
		Short: "Show the task hierarchy (parents and the sub-tasks they dispatched) with statuses",
		Long: `A task dispatched from inside another task's pane is its child (level + 1).
'runner tree' shows every root task and its descendants; 'runner tree ID' one subtree.`,
		Example: `  runner tree
  runner tree t_pqr678 --json`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runTree(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// treeOptions are the arguments and flags of `runner tree`.
type treeOptions struct {
	args   []string
	asJSON bool
}

func (a *app) runTree(ctx context.Context, opts treeOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	root := ""
	if len(opts.args) == 1 {
		root = opts.args[0]
	}
	nodes, err := tasks.Tree(ctx, tasksDeps(env), root)
	if err != nil {
		return err
	}
	if opts.asJSON {
		if nodes == nil {
			nodes = []*messaging.TreeNode{}
		}
		return a.printJSON(nodes)
	}
	messaging.PrintTree(a.out, nodes)
	return nil
}

func (a *app) newCollectCmd() *cobra.Command {
	var opts collectOptions
	cmd := &cobra.Command{
		Use:   "collect PARENT",
		Short: "Each child task's outcome and result tail, and whether all are finished",
		Example: `  runner collect t_pqr678
  runner collect t_pqr678 --json`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runCollect(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// collectOptions are the arguments and flags of `runner collect`.
type collectOptions struct {
	args   []string
	asJSON bool
}

func (a *app) runCollect(ctx context.Context, opts collectOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	c, err := tasks.Collect(ctx, tasksDeps(env), opts.args[0])
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(c)
	}
	messaging.PrintCollection(a.out, c)
	return nil
}
