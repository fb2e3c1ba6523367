package agentscmd

import (
	"context"
	"io"
	"os"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/doctor"
	"github.com/runner-cli/runner/runner/explain"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/spf13/cobra"
)

// cmds are the commands of `runner agents` over the factory they run on.
type cmds struct{ f *cmdkit.Factory }

// NewCmd builds `runner agents` and its commands (detect, show, check,
// explain) over f.
func NewCmd(f *cmdkit.Factory) *cobra.Command {
	ac := &cmds{f}
	var opts agentsOptions
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List agent profiles and whether each CLI is installed",
		Long: `List the agent profiles (the built-in ones, as your agent files and config
override them, and the agents your files add), whether each CLI is in PATH, where, and its
version (each '<cli> --version' is bounded by a few seconds; --no-version skips it),
and whether the CLI has a turn-end hook (HOOK): with one, a turn ends the moment
the agent says so and the answer comes from the hook's payload; without, both
come from the screen ('runner agents --json' says which event for each); and
the version of the CLI its profile was verified on through the model mock
(VERIFIED), or "unverified" for a profile that never ran a turn against its
CLI ('runner agents --json' says why, in "unverified").
'runner agents --json' also says, in "ask", what --permissions ask (runner's
default) passes each CLI for the version installed: its asking mode and what
asks there, or that it has none.`,
		Example: `  runner agents
  runner agents --json --no-version`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return ac.runAgents(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&opts.noVersion, "no-version", false, "do not run the CLIs to read their versions")
	cmd.AddCommand(ac.newDetectCmd(), ac.newShowCmd(), ac.newCheckCmd(), ac.newExplainCmd())
	return cmd
}

// agentsOptions are the arguments and flags of `runner agents`.
type agentsOptions struct {
	asJSON    bool
	noVersion bool
}

func (ac *cmds) runAgents(ctx context.Context, opts agentsOptions) error {
	if opts.asJSON {
		ac.f.JSONErrors(true)
	}
	cfg, err := ac.f.Config()
	if err != nil {
		return err
	}
	ps, err := cfg.Profiles()
	if err != nil {
		return err
	}
	self, _ := os.Executable()
	sts := doctor.CheckAgents(ctx, ps, self, !opts.noVersion)
	if opts.asJSON {
		return ac.f.PrintJSON(sts)
	}
	return doctor.WriteAgents(ac.f.Out, sts)
}

func (ac *cmds) newShowCmd() *cobra.Command {
	var opts agentsShowOptions
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Print an agent profile as JSON (the keys an agent file or config override can set)",
		Long: `Print the agent profile NAME as runner uses it (the built-in one as your agent
file and config override it) as JSON: its keys are those an agent file
(<config dir>/agents/NAME.toml) or the config's "profiles" can set.
"permissions_ask" is the CLI's asking mode by version range (dispatch
--permissions ask, runner's default), each range with a "doc" of what asks
in it and what the CLI's own default does there; "permissions_auto_args"
and "permissions_auto_doc" are --permissions auto's.

--toml prints the built-in agent file of NAME instead, comments and all: the
file an agents/NAME.toml of yours overrides, key by key.`,
		Example: `  runner agents show claude
  runner agents show codex --toml`,
		Args: cmdkit.Args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return ac.runAgentsShow(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.toml, "toml", false, "print the built-in agent file (TOML) instead")
	return cmd
}

// agentsShowOptions are the arguments and flags of `runner agents show`.
type agentsShowOptions struct {
	args []string
	toml bool
}

func (ac *cmds) runAgentsShow(ctx context.Context, opts agentsShowOptions) error {
	if opts.toml {
		b, err := profile.BuiltinFile(opts.args[0])
		if err != nil {
			return fault.Usagef("agents show --toml: %v (the built-in agents: see 'runner agents')", err)
		}
		_, err = ac.f.Out.Write(b)
		return err
	}
	ac.f.JSONErrors(true)
	cfg, err := ac.f.Config()
	if err != nil {
		return err
	}
	p, err := cfg.Profile(opts.args[0])
	if err != nil {
		return err
	}
	return ac.f.PrintJSON(p)
}

type detectOutput struct {
	Agent string `json:"agent"`
	File  string `json:"file"`
	profile.Detection
}

func (ac *cmds) newDetectCmd() *cobra.Command {
	var opts agentsDetectOptions

	cmd := &cobra.Command{
		Use:   "detect (--pane ID | --file SCREEN) --agent NAME",
		Short: "Print the state an agent profile sees on a captured screen, and why",
		Long: `Classify a captured screen (tmux capture-pane -p, with or without -e; '-' reads
stdin) with an agent profile, and print the state and the pattern that decided:
for debugging a new agent release and for adding fixtures.

The pane flags give what tmux would say besides the text (#{pane_current_command},
#{alternate_on}, #{cursor_y}, #{pane_dead_status}), for screens the text alone
cannot decide (a pager in the shell profile, a question versus output).

States: ready, busy, needs_input, starting, exited, error, unknown.`,
		Example: `  runner agents detect --pane %3 --agent claude
  runner agents detect --file claude-screen.txt --agent claude --json`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.paneInfo.changed(cmd)
			return ac.runAgentsDetect(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.file, "file", "", "the captured screen (`SCREEN` file, or - for stdin)")
	f.StringVar(&opts.pane, "pane", "", "capture this live pane (`ID`, e.g. %3) on the --socket server and use what tmux says about it")
	f.StringVar(&opts.agent, "agent", "", "the agent profile (`NAME`)")
	f.BoolVar(&opts.asJSON, "json", false, "print as JSON")
	opts.paneInfo.add(cmd)
	return cmd
}

// agentsDetectOptions are the arguments and flags of `runner agents detect`.
type agentsDetectOptions struct {
	asJSON   bool
	file     string
	agent    string
	pane     string
	paneInfo paneInfoFlags
}

// paneInfoFlags are the flags that give what tmux would say about a
// captured screen's pane (agents detect, agents explain).
type paneInfoFlags struct{ explain.PaneFacts }

func (o *paneInfoFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.CurrentCommand, "current-command", "", "the pane's foreground `COMMAND` (#{pane_current_command})")
	f.BoolVar(&o.AlternateOn, "alternate-on", false, "the pane shows the alternate screen (#{alternate_on})")
	f.IntVar(&o.CursorRow, "cursor-row", 0, "the cursor's 0-based `ROW` (#{cursor_y})")
	f.IntVar(&o.DeadStatus, "dead-status", 0, "the pane is dead with this exit `STATUS` (#{pane_dead_status})")
}

// changed notes which of the flags cmd was given.
func (o *paneInfoFlags) changed(cmd *cobra.Command) {
	o.CursorRowSet = cmd.Flags().Changed("cursor-row")
	o.DeadStatusSet = cmd.Flags().Changed("dead-status")
}

func (ac *cmds) runAgentsDetect(ctx context.Context, opts agentsDetectOptions) error {
	if opts.asJSON {
		ac.f.JSONErrors(true)
	}
	if (opts.file == "") == (opts.pane == "") {
		return fault.Usagef("agents detect: give --pane ID (a live pane) or --file SCREEN (a capture-pane text file, or - for stdin)")
	}
	if opts.agent == "" {
		return fault.Usagef("agents detect: --agent is required (see 'runner agents')")
	}
	cfg, err := ac.f.Config()
	if err != nil {
		return err
	}
	p, err := cfg.Profile(opts.agent)
	if err != nil {
		return err
	}
	var screen string
	var info profile.PaneInfo
	if opts.pane != "" {
		if screen, info, err = explain.Capture(ctx, ac.f.TmuxFor(cfg), opts.pane); err != nil {
			return err
		}
		opts.file = opts.pane
	} else if screen, err = ac.readScreen("agents detect", opts.file); err != nil {
		return err
	}
	if err := opts.paneInfo.Apply("agents detect", &info); err != nil {
		return err
	}
	d := profile.DetectPane(p, screen, info)
	if opts.asJSON {
		return ac.f.PrintJSON(detectOutput{Agent: opts.agent, File: opts.file, Detection: d})
	}
	explain.WriteDetection(ac.f.Out, d)
	return nil
}

// readScreen reads a captured screen from file ("-": stdin); cmdName
// names the command in errors.
func (ac *cmds) readScreen(cmdName, file string) (string, error) {
	var b []byte
	var err error
	if file == "-" {
		b, err = io.ReadAll(ac.f.In)
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return "", fault.Usagef("%s: read screen %s: %v", cmdName, file, err)
	}
	return string(b), nil
}
