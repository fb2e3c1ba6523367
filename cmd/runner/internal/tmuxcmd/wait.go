// runner tmux wait-prompt, wait-idle and exec: the waiting commands.

package tmuxcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

func (tc *cmds) newWaitPromptCmd() *cobra.Command {
	var opts tmuxWaitPromptOptions
	cmd := &cobra.Command{
		Use:   "wait-prompt --pane ID --pattern RE [--timeout 30s]",
		Short: "Wait until new output matches a regular expression",
		Long: `Wait until a line of output that appeared after the last 'runner tmux send'
to this pane (or, with --since now, after this command started) matches RE.
Output that was already there never matches. Captured lines have their
trailing spaces removed: match "\$$" for a "$ " prompt. Exits 3 on timeout.`,
		Example: `  runner tmux send --pane %3 "git status"
  runner tmux wait-prompt --pane %3 --pattern '[$#]$' --timeout 1m`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return tc.runTmuxWaitPrompt(cmd.Context(), opts)
		},
	}
	paneFlag(cmd, &opts.pane)
	cmd.Flags().StringVar(&opts.pattern, "pattern", "", "regular expression (Go syntax) to wait for")
	_ = cmd.MarkFlagRequired("pattern")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", 30*time.Second, "give up after this long (exit 3)")
	cmd.Flags().StringVar(&opts.since, "since", "send", "match output after the last 'runner tmux send' (send) or after now (now)")
	tc.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// tmuxWaitPromptOptions are the arguments and flags of `runner tmux wait-prompt`.
type tmuxWaitPromptOptions struct {
	pane    string
	pattern string
	since   string
	timeout time.Duration
	asJSON  bool
}

func (tc *cmds) runTmuxWaitPrompt(ctx context.Context, opts tmuxWaitPromptOptions) error {
	re, err := regexp.Compile(opts.pattern)
	if err != nil {
		return fault.Usagef("--pattern: %v", err)
	}
	if opts.since != "send" && opts.since != "now" {
		return fault.Usagef("--since must be send or now")
	}
	c, err := tc.client(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := cmdkit.WithTimeout(ctx, opts.timeout)
	defer cancel()
	m, err := c.WaitPromptAfter(ctx, opts.pane, re, opts.since == "send", opts.timeout)
	if err != nil {
		return err
	}
	if opts.asJSON {
		return tc.f.PrintJSON(map[string]any{"pane_id": opts.pane, "line": m.Line, "match": m.Match, "elapsed_ms": m.Elapsed.Milliseconds()})
	}
	fmt.Fprintln(tc.f.Out, m.Line)
	return nil
}

func (tc *cmds) newWaitIdleCmd() *cobra.Command {
	var opts tmuxWaitIdleOptions
	cmd := &cobra.Command{
		Use:   "wait-idle --pane ID [--quiet 2s] [--timeout 60s] [--mask RE]...",
		Short: "Wait until a pane's screen stops changing",
		Long: `Wait until the pane's visible screen has not changed for --quiet. Parts that
always change (clocks, timers) can be removed before comparing with --mask RE.
The pane's output is watched through a pipe (pipe-pane), so a quiet pane costs
almost nothing. A dead or missing pane is an error (exit 1 or 2), never idle.
Exits 3 on timeout.`,
		Example: `  runner tmux wait-idle --pane %3
  runner tmux wait-idle --pane %3 --quiet 1s --mask '[0-9]+:[0-9]{2}'   # a clock changes`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return tc.runTmuxWaitIdle(cmd.Context(), opts)
		},
	}
	paneFlag(cmd, &opts.pane)
	cmd.Flags().DurationVar(&opts.quiet, "quiet", 2*time.Second, "how long the screen must stay unchanged")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", 60*time.Second, "give up after this long (exit 3)")
	cmd.Flags().StringArrayVar(&opts.masks, "mask", nil, "regular expression for volatile text to ignore (repeatable)")
	tc.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// tmuxWaitIdleOptions are the arguments and flags of `runner tmux wait-idle`.
type tmuxWaitIdleOptions struct {
	pane    string
	quiet   time.Duration
	timeout time.Duration
	masks   []string
	asJSON  bool
}

func (tc *cmds) runTmuxWaitIdle(ctx context.Context, opts tmuxWaitIdleOptions) error {
	var res []*regexp.Regexp
	for _, m := range opts.masks {
		re, err := regexp.Compile(m)
		if err != nil {
			return fault.Usagef("--mask %q: %v", m, err)
		}
		res = append(res, re)
	}
	if opts.quiet <= 0 {
		return fault.Usagef("--quiet must be positive")
	}
	ctx, cancel := cmdkit.WithTimeout(ctx, opts.timeout)
	defer cancel()
	c, err := tc.client(ctx)
	if err != nil {
		return err
	}
	r, err := c.WaitIdle(ctx, opts.pane, tmuxctl.IdleOptions{Quiet: opts.quiet, Masks: res, AutoPipe: true})
	if err != nil {
		return err
	}
	if opts.asJSON {
		return tc.f.PrintJSON(map[string]any{"pane_id": opts.pane, "idle": true, "elapsed_ms": r.Elapsed.Milliseconds(), "captures": r.Captures, "source": r.Source, "screen": r.Screen})
	}
	fmt.Fprintf(tc.f.Out, "idle after %s\n", r.Elapsed.Round(time.Millisecond))
	return nil
}

func (tc *cmds) newExecCmd() *cobra.Command {
	var opts tmuxExecOptions
	cmd := &cobra.Command{
		Use:   "exec --pane ID [--timeout 30s] [--json] -- COMMAND",
		Short: "Run a shell command in a pane; print its output, exit with its status",
		Long: `Run COMMAND (a shell command line; several arguments are joined with spaces)
in a pane that is at a shell prompt, and print its output. Plain: exits with
the command's exit status. --json: prints {"output":…,"exit_code":…} and exits 0.
The output is read from the pane's output stream (piped to a file while the
command runs), so it comes back whole at any length, beyond the screen and the
pane's scrollback; escape sequences are removed.`,
		Example: `  runner tmux exec --pane %3 -- git status --short
  runner tmux exec --pane %3 --timeout 5m --json -- ./test.sh`,
		Args: cmdkit.Args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return tc.runTmuxExec(cmd.Context(), opts)
		},
	}
	paneFlag(cmd, &opts.pane)
	cmd.Flags().DurationVar(&opts.timeout, "timeout", 30*time.Second, "give up after this long (exit 3)")
	tc.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// tmuxExecOptions are the arguments and flags of `runner tmux exec`.
type tmuxExecOptions struct {
	args    []string
	pane    string
	timeout time.Duration
	asJSON  bool
}

func (tc *cmds) runTmuxExec(ctx context.Context, opts tmuxExecOptions) error {
	ctx, cancel := cmdkit.WithTimeout(ctx, opts.timeout)
	defer cancel()
	c, err := tc.client(ctx)
	if err != nil {
		return err
	}
	res, err := c.Exec(ctx, opts.pane, strings.Join(opts.args, " "))
	if err != nil {
		if errors.Is(err, tmuxctl.ErrNotAtShell) {
			return fault.Usagef("%v", err)
		}
		return err
	}
	if opts.asJSON {
		return tc.f.PrintJSON(map[string]any{"output": res.Output, "exit_code": res.ExitCode})
	}
	if _, err := io.WriteString(tc.f.Out, res.Output); err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return &cmdkit.ProgramExit{Status: res.ExitCode}
	}
	return nil
}
