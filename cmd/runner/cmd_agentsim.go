package main

import (
	"context"
	"errors"
	"os"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/runner/agentsim"
	"github.com/spf13/cobra"
)

// newAgentSimCmd builds the hidden `runner agent-sim`, the scripted agent
// with a real TUI that tests (and the README's demo) drive in tmux panes.
func (a *app) newAgentSimCmd() *cobra.Command {
	var opts agentSimOptions
	cmd := &cobra.Command{
		Use:    "agent-sim",
		Short:  "Run the simulated agent (a scripted TUI for tests)",
		Hidden: true,
		Long: `agent-sim behaves like a TUI coding agent on its terminal. Each line of a submitted
prompt is a directive: sleep D, silent D, say TEXT, write PATH TEXT, ask QUESTION, confirm QUESTION,
run ARG..., exit N, crash, recall (the session's earlier prompts); any other line is acknowledged with "Done: <line>".`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.promptSet = cmd.Flags().Changed("prompt")
			return a.runAgentSim(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.opts.Record, "record", "", "append one JSON line {\"prompt\": …} per submitted prompt to `FILE`")
	f.StringVar(&opts.hook, "hook", "", "run `ARGV` at the end of every turn with a Stop event as JSON on stdin")
	f.StringVar(&opts.contextHook, "context-hook", "", "run `ARGV` after each tool (write, run) with a PostToolUse event as JSON on stdin; its output's hookSpecificOutput.additionalContext is shown in the turn (\"context: …\")")
	f.StringVar(&opts.opts.TranscriptDir, "transcript-dir", "", "keep a Claude-style transcript per session in `DIR`, which the Stop hook's input names instead of carrying the usage")
	f.DurationVar(&opts.opts.TranscriptLate, "transcript-late", 0, "with --transcript-dir, write a turn's answer and usage this long after its Stop hook ran (as Claude Code does)")
	f.DurationVar(&opts.opts.Startup, "startup", 0, "delay before the first prompt box")
	f.BoolVar(&opts.opts.Trust, "trust", false, "show the trust dialog first")
	f.BoolVar(&opts.opts.TrustLate, "trust-late", false, "show the trust dialog after the first prompt is submitted, holding it until accepted")
	f.StringVarP(&opts.prompt, "prompt", "p", "", "headless: run PROMPT's directives, print the answer, exit")
	f.StringVar(&opts.resume, "resume", "", "continue the conversation with session `ID` (printed when the sim exits)")
	return cmd
}

// agentSimOptions are the arguments and flags of `runner agent-sim`.
type agentSimOptions struct {
	opts agentsim.Options
	hook string
	// contextHook is --context-hook's command line.
	contextHook string
	prompt      string
	resume      string
	promptSet   bool // --prompt was given
}

func (a *app) runAgentSim(ctx context.Context, opts agentSimOptions) error {
	if opts.hook != "" {
		argv, err := agentsim.SplitArgs(opts.hook)
		if err != nil || len(argv) == 0 {
			return fault.Usagef("--hook %q: not a command line (%v)", opts.hook, err)
		}
		opts.opts.Hook = argv
	}
	if opts.contextHook != "" {
		argv, err := agentsim.SplitArgs(opts.contextHook)
		if err != nil || len(argv) == 0 {
			return fault.Usagef("--context-hook %q: not a command line (%v)", opts.contextHook, err)
		}
		opts.opts.ContextHook = argv
	}
	if opts.resume != "" {
		opts.opts.SessionID, opts.opts.Resumed = opts.resume, true
	}
	opts.opts.Env = os.Environ()
	var (
		code int
		err  error
	)
	if opts.promptSet {
		code, err = agentsim.RunHeadless(ctx, opts.opts, opts.prompt, a.rawOut, a.rawErr)
	} else {
		tty, ok := a.in.(*os.File)
		if !ok {
			return fault.Usagef("agent-sim needs a terminal on stdin (or -p PROMPT for headless mode)")
		}
		code, err = agentsim.Run(ctx, opts.opts, tty, a.rawOut)
		if errors.Is(err, agentsim.ErrNotTerminal) {
			return fault.Usagef("%v", err)
		}
	}
	if err == nil && code == 0 {
		return nil
	}
	return &exitcode.Error{Code: code, Err: err}
}
