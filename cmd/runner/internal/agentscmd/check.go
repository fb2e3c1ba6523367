package agentscmd

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/spf13/cobra"
)

func (ac *cmds) newCheckCmd() *cobra.Command {
	var opts agentsCheckOptions
	cmd := &cobra.Command{
		Use:   "check [FILE...]",
		Short: "Validate agent files (TOML profiles) as runner would load them",
		Long: `Validate agent files: TOML whose keys are a profile's ('runner agents show NAME'),
named NAME.toml for the agent NAME. A file named after a built-in agent overrides
the keys it sets; any other defines a new agent (it needs "command"). Each file is
checked alone, over the built-in agent of its name: its TOML, its keys, the type
of each value, and every regular expression. Errors name the file, the line and
the key.

Without FILE, every NAME.toml in the agents folder beside the config file
(<config dir>/agents, e.g. ~/.config/runner/agents) is checked: those are the
files every runner command loads, and a bad one stops them all (exit 2).

Exit status 0 when every file is valid, 2 when one is not (or none can be read).`,
		Example: `  runner agents check                 # every file in ~/.config/runner/agents
  runner agents check ~/.config/runner/agents/claude.toml --json`,
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.files = argv
			return ac.runAgentsCheck(cmd.Context(), opts)
		},
	}
	ac.f.JSONFlag(cmd, &opts.asJSON, "print the result as JSON: [{file, agent, ok, overrides_builtin, keys, error: {file, line, column, key, message}}]")
	return cmd
}

// agentsCheckOptions are the arguments and flags of `runner agents check`.
type agentsCheckOptions struct {
	files  []string
	asJSON bool
}

func (ac *cmds) runAgentsCheck(ctx context.Context, opts agentsCheckOptions) error {
	files := opts.files
	if len(files) == 0 {
		dir := config.AgentsDir(ac.f.Getenv)
		if dir == "" {
			return fault.Usagef("agents check: no config directory (none of RUNNER_CONFIG, XDG_CONFIG_HOME, HOME is set): name the FILE to check")
		}
		paths, err := config.AgentFilesIn(dir)
		if err != nil {
			return err
		}
		if len(paths) == 0 && !opts.asJSON {
			fmt.Fprintf(ac.f.Out, "no agent files in %s\n", dir)
			return nil
		}
		files = paths
	}
	checks, bad := config.CheckAgentFiles(files)
	if opts.asJSON {
		if err := ac.f.PrintJSON(checks); err != nil {
			return err
		}
	} else {
		for _, c := range checks {
			fmt.Fprintln(ac.f.Out, c.Line())
		}
	}
	if bad > 0 {
		return &cmdkit.SilentError{Kind: fault.ErrUsage} // each file's verdict is printed
	}
	return nil
}
