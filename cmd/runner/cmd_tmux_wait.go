// runner tmux wait-prompt, wait-idle and exec: the waiting commands.

package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

func (a *app) newTmuxWaitPromptCmd() *cobra.Command {
	var (
		pane, pattern, since string
		timeout              time.Duration
		asJSON               bool
	)
	cmd := &cobra.Command{
		Use:   "wait-prompt --pane ID --pattern RE [--timeout 30s]",
		Short: "Wait until new output matches a regular expression",
		Long: `Wait until a line of output that appeared after the last 'runner tmux send'
to this pane (or, with --since now, after this command started) matches RE.
Output that was already there never matches. Captured lines have their
trailing spaces removed: match "\$$" for a "$ " prompt. Exits 3 on timeout.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			re, err := regexp.Compile(pattern)
			if err != nil {
				return exit.Usagef("--pattern: %v", err)
			}
			if since != "send" && since != "now" {
				return exit.Usagef("--since must be send or now")
			}
			c, err := a.tmuxClient()
			if err != nil {
				return err
			}
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			mark, ok := tmuxctl.Mark{}, false
			if since == "send" {
				if mark, ok, err = c.LoadMark(ctx, pane); err != nil {
					return err
				}
			}
			if !ok {
				if mark, err = c.MarkNow(ctx, pane); err != nil {
					return err
				}
			}
			m, err := c.WaitPrompt(ctx, pane, re, mark)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(map[string]any{"pane_id": pane, "line": m.Line, "match": m.Match, "elapsed_ms": m.Elapsed.Milliseconds()})
			}
			fmt.Fprintln(a.out, m.Line)
			return nil
		},
	}
	paneFlag(cmd, &pane)
	cmd.Flags().StringVar(&pattern, "pattern", "", "regular expression (Go syntax) to wait for")
	_ = cmd.MarkFlagRequired("pattern")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "give up after this long (exit 3)")
	cmd.Flags().StringVar(&since, "since", "send", "match output after the last 'runner tmux send' (send) or after now (now)")
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func (a *app) newTmuxWaitIdleCmd() *cobra.Command {
	var (
		pane    string
		quiet   time.Duration
		timeout time.Duration
		masks   []string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "wait-idle --pane ID [--quiet 2s] [--timeout 60s] [--mask RE]...",
		Short: "Wait until a pane's screen stops changing",
		Long: `Wait until the pane's visible screen has not changed for --quiet. Parts that
always change (clocks, timers) can be removed before comparing with --mask RE.
The pane's output is watched through a pipe (pipe-pane), so a quiet pane costs
almost nothing. A dead or missing pane is an error (exit 1 or 2), never idle.
Exits 3 on timeout.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var res []*regexp.Regexp
			for _, m := range masks {
				re, err := regexp.Compile(m)
				if err != nil {
					return exit.Usagef("--mask %q: %v", m, err)
				}
				res = append(res, re)
			}
			if quiet <= 0 {
				return exit.Usagef("--quiet must be positive")
			}
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			c, err := a.tmuxClient()
			if err != nil {
				return err
			}
			r, err := c.WaitIdle(ctx, pane, tmuxctl.IdleOptions{Quiet: quiet, Masks: res, AutoPipe: true})
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(map[string]any{"pane_id": pane, "idle": true, "elapsed_ms": r.Elapsed.Milliseconds(), "captures": r.Captures, "source": r.Source, "screen": r.Screen})
			}
			fmt.Fprintf(a.out, "idle after %s\n", r.Elapsed.Round(time.Millisecond))
			return nil
		},
	}
	paneFlag(cmd, &pane)
	cmd.Flags().DurationVar(&quiet, "quiet", 2*time.Second, "how long the screen must stay unchanged")
	cmd.Flags().DurationVar(&timeout, "timeout", 60*time.Second, "give up after this long (exit 3)")
	cmd.Flags().StringArrayVar(&masks, "mask", nil, "regular expression for volatile text to ignore (repeatable)")
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func (a *app) newTmuxExecCmd() *cobra.Command {
	var (
		pane    string
		timeout time.Duration
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "exec --pane ID [--timeout 30s] [--json] -- COMMAND",
		Short: "Run a shell command in a pane; print its output, exit with its status",
		Long: `Run COMMAND (a shell command line; several arguments are joined with spaces)
in a pane that is at a shell prompt, and print its output. Plain: exits with
the command's exit status. --json: prints {"output":…,"exit_code":…} and exits 0.
The output is read from the pane's output stream (piped to a file while the
command runs), so it comes back whole at any length, beyond the screen and the
pane's scrollback; escape sequences are removed.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			c, err := a.tmuxClient()
			if err != nil {
				return err
			}
			res, err := c.Exec(ctx, pane, strings.Join(argv, " "))
			if err != nil {
				if errors.Is(err, tmuxctl.ErrNotAtShell) {
					return exit.Usagef("%v", err)
				}
				return err
			}
			if asJSON {
				return a.printJSON(map[string]any{"output": res.Output, "exit_code": res.ExitCode})
			}
			if _, err := io.WriteString(a.out, res.Output); err != nil {
				return err
			}
			if res.ExitCode != 0 {
				return &exit.ExitError{Code: res.ExitCode}
			}
			return nil
		},
	}
	paneFlag(cmd, &pane)
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "give up after this long (exit 3)")
	a.jsonFlag(cmd, &asJSON)
	return cmd
}
