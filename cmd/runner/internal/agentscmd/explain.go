package agentscmd

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/explain"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/spf13/cobra"
)

func (ac *cmds) newExplainCmd() *cobra.Command {
	var opts agentsExplainOptions
	cmd := &cobra.Command{
		Use:   "explain (--screen SCREEN --agent NAME | --pane ID | --task ID)",
		Short: "Say why an agent profile reads a captured screen as it does: the rule, its file and line",
		Long: `Classify a captured screen (tmux capture-pane -p, with or without -e; '-' reads
stdin) with an agent profile, as 'runner agents detect' does, and say why: the
rule (pattern) that decided the state, the file and line it is written on (a
built-in agent file, yours in <config dir>/agents, or the config file), the
screen lines it matched, and every other state rule of the profile in the order
they are tried — exited, trust, needs_input, starting, busy, ready, then for a
ready screen turn_open/turn_closed and error/error_reset — with the lines each
matches and whether it was tried (a rule after the one that decided had no say).

--pane ID captures a live pane on the --socket server (and, when it is a task's,
uses the task's agent); --task ID captures the task's pane, here or on its host.
For a task, the output also names the last hook event in its events file (the
agent's own word, which ends a turn before any screen rule does) and how long
ago it came.

The pane flags give what tmux would say besides the text, as for 'agents detect'
(for a live pane, they override what tmux says).`,
		Example: `  runner agents explain --task t_abc123
  runner agents explain --screen claude-screen.txt --agent claude --json`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.paneInfo.changed(cmd)
			return ac.runAgentsExplain(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.screen, "screen", "", "the captured screen (`SCREEN` file, or - for stdin)")
	f.StringVar(&opts.agent, "agent", "", "the agent profile (`NAME`; for a task's pane, the task's agent by default)")
	f.StringVar(&opts.pane, "pane", "", "capture this live pane (`ID`, e.g. %3) on the --socket server")
	f.StringVar(&opts.task, "task", "", "capture this task's pane (`ID` or unique prefix), here or on its host")
	ac.f.JSONFlag(cmd, &opts.asJSON, "print as JSON: the detection (state, field, rule, pattern, line, line_no, question…), decided, bottom, rules [{rule, field, pattern, origin: {file, line, builtin}, region, lines: [{n, text}], tried, decided}], sources")
	opts.paneInfo.add(cmd)
	return cmd
}

// agentsExplainOptions are the arguments and flags of `runner agents explain`.
type agentsExplainOptions struct {
	screen   string
	pane     string
	task     string
	agent    string
	asJSON   bool
	paneInfo paneInfoFlags
}

func (ac *cmds) runAgentsExplain(ctx context.Context, opts agentsExplainOptions) error {
	if opts.asJSON {
		ac.f.JSONErrors(true)
	}
	given := 0
	for _, v := range []string{opts.screen, opts.pane, opts.task} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return fault.Usagef("agents explain: give one of --screen SCREEN (a capture-pane text file, or - for stdin), --pane ID (a live pane) or --task ID")
	}
	out := explainOutput{Pane: opts.pane}
	var screen string
	var info profile.PaneInfo
	var cfg *config.Config
	var err error
	if opts.screen != "" {
		if opts.agent == "" {
			return fault.Usagef("agents explain: --agent is required with --screen (see 'runner agents')")
		}
		if screen, err = ac.readScreen("agents explain", opts.screen); err != nil {
			return err
		}
		if cfg, err = ac.f.Config(); err != nil {
			return err
		}
	} else if screen, info, cfg, err = ac.explainCapture(ctx, &opts, &out); err != nil {
		return err
	}
	p, err := cfg.Profile(opts.agent)
	if err != nil {
		return err
	}
	if err := opts.paneInfo.Apply("agents explain", &info); err != nil {
		return err
	}
	out.Explanation = p.ExplainPane(screen, info)
	if opts.asJSON {
		return ac.f.PrintJSON(out)
	}
	if out.Task != "" {
		fmt.Fprintf(ac.f.Out, "task %s, pane %s\n", out.Task, out.Pane)
	}
	explain.WriteExplanation(ac.f.Out, out.Explanation)
	if out.Task != "" {
		fmt.Fprintf(ac.f.Out, "last hook event: %s\n", explain.HookLine(out.LastHook, clock.Now()))
	}
	return nil
}

// explainOutput is `agents explain`'s answer: the explanation, and for a
// live pane which it was, the task it belongs to and the task's last hook
// event.
type explainOutput struct {
	profile.Explanation
	Pane     string             `json:"pane,omitempty"`
	Task     string             `json:"task,omitempty"`
	LastHook *explain.HookEvent `json:"last_hook_event,omitempty"`
}

// explainCapture captures the pane of opts.pane or opts.task, sets the
// agent (the task's, unless --agent says) and fills in the task and its
// last hook event; cfg is the config it loaded.
func (ac *cmds) explainCapture(ctx context.Context, opts *agentsExplainOptions, out *explainOutput) (screen string, info profile.PaneInfo, cfg *config.Config, err error) {
	env, cfg, err := ac.f.Env(false)
	if err != nil {
		return "", profile.PaneInfo{}, nil, err
	}
	tg, err := explain.Locate(ctx, explainTasks{env}, env.TC, env.TC.Socket(), opts.task, opts.pane, opts.agent, "agents explain")
	if err != nil {
		return "", profile.PaneInfo{}, nil, err
	}
	opts.agent, out.Task, out.Pane, out.LastHook = tg.Agent, tg.Task, tg.Pane, tg.LastHook
	screen, info, err = explain.Capture(ctx, tg.Panes, tg.Pane)
	return screen, info, cfg, err
}

// explainTasks is the Env as package explain reads tasks.
type explainTasks struct{ env *runner.Env }

func (x explainTasks) GetTask(ctx context.Context, ref string) (*state.Task, error) {
	return runner.GetTask(ctx, x.env, ref)
}

func (x explainTasks) State(ctx context.Context) (*state.State, error) { return x.env.Store.Read(ctx) }

func (x explainTasks) PaneClient(ctx context.Context, t *state.Task) (explain.Panes, error) {
	c, err := x.env.PaneClient(ctx, t)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (x explainTasks) EventsFile(id string) string { return x.env.Store.TaskFile(state.FileEvents, id) }
