package main

import (
	"context"
	"strings"

	"github.com/runner-cli/runner/runner/tasks"
	"github.com/spf13/cobra"
)

// usageOptions are the flags of `runner usage`.
type usageOptions struct {
	since, by, project, host string
	asJSON                   bool
}

func (a *app) newUsageCmd() *cobra.Command {
	var o usageOptions
	cmd := &cobra.Command{
		Use:   "usage [--since 24h] [--by project|agent|day|task|tree|host] [--project P] [--host H] [--json]",
		Short: "What tasks spent: tokens in, out and cached, and cost where the agent CLI reports it",
		Long: `Sum what tasks spent, as each agent CLI recorded it for every turn (Claude
Code's transcript, Codex's session file, Gemini CLI's and Qwen Code's chat
files, OpenCode's and pi's messages): never estimated from text. A turn whose
CLI recorded nothing is counted as unknown, not as 0 (UNKNOWN column; "?"
when no turn of the group is known). COST is shown only where the CLI reports
one (OpenCode, pi); "≥" marks a sum that lacks some turns' cost.

--by tree sums each task tree under its root (a task dispatched from outside
any task): what a task and everything it dispatched spent. --by host sums each
host's tasks (local: this machine's); --host keeps one host's.

--since keeps the tasks active in the window (not ended before it); a task
counts whole. The state keeps finished tasks for its retention
(runner state --help).`,
		Example: `  runner usage
  runner usage --since 24h --by agent
  runner usage --by tree --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runUsage(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.since, "since", "", "only tasks active from this long ago (24h) or this time (RFC 3339) on")
	f.StringVar(&o.by, "by", tasks.ByProject, "group by "+strings.Join(tasks.UsageGroupings, ", "))
	f.StringVar(&o.project, "project", "", "only tasks of this project: a registered name or a directory")
	f.StringVar(&o.host, "host", "", "only tasks on this host (local: this machine's)")
	a.jsonFlag(cmd, &o.asJSON)
	return cmd
}

func (a *app) runUsage(ctx context.Context, o usageOptions) error {
	opts := tasks.UsageOptions{By: o.by, Project: o.project, Host: o.host}
	if o.since != "" {
		t, err := parseSince(o.since, "24h")
		if err != nil {
			return err
		}
		opts.Since = t
	}
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	rep, err := tasks.Usage(ctx, tasksDeps(env), opts)
	if err != nil {
		return err
	}
	if o.asJSON {
		return a.printJSON(rep)
	}
	return tasks.WriteUsage(a.out, rep)
}
