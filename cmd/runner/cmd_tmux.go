package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

func (a *app) newTmuxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tmux",
		Short: "Control tmux panes from scripts (launch, send, keys, capture, wait, exec)",
		Long: `The runner tmux commands drive any program in a tmux pane, safely:
text is delivered through a paste buffer (never as tmux arguments), Enter is
sent separately after a delay, and waits end with exit 3 on timeout.

All commands talk to runner's private tmux server (tmux -L runner) unless
--socket NAME|PATH or $RUNNER_TMUX_SOCKET says otherwise. Panes are addressed
by id (%12), as printed by 'runner tmux launch' and 'runner tmux list'.

With --host NAME (see 'runner host'), they drive that machine's tmux over the
host's shared ssh connection: its private server (tmux -L runner) unless
--socket names one there. Text still goes through a paste buffer, byte-exact
(load-buffer reads it from ssh's stdin); wait-idle polls the screen and exec
reads the scrollback (the pipe files would be on the other machine).`,
		Example: `  pane=$(runner tmux launch --name scratch -- bash)
  runner tmux send --pane "$pane" "git status"
  runner tmux wait-prompt --pane "$pane" --pattern '[$#]$'
  runner tmux capture --pane "$pane" --lines 50`,
	}
	cmd.PersistentFlags().StringVar(&a.tmuxHost, "host", "", "drive the tmux of this registered host (runner host add) over ssh")
	cmd.AddCommand(a.newTmuxLaunchCmd(), a.newTmuxSendCmd(), a.newTmuxKeysCmd(), a.newTmuxCaptureCmd(),
		a.newTmuxWaitPromptCmd(), a.newTmuxWaitIdleCmd(), a.newTmuxExecCmd(), a.newTmuxListCmd(), a.newTmuxKillCmd())
	return cmd
}

func paneFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "pane", "", "pane id, e.g. %12 (see 'runner tmux list')")
	_ = cmd.MarkFlagRequired("pane")
}

// withTimeout bounds ctx by d when d > 0.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

func (a *app) newTmuxLaunchCmd() *cobra.Command {
	var opts tmuxLaunchOptions
	cmd := &cobra.Command{
		Use:   "launch --name NAME [--cwd DIR] [--size 120x40] [--env K=V]... -- ARGV...",
		Short: "Start a program in a new pane and print the pane id",
		Long: `Start ARGV (executed directly, never through a shell) in a new window of
session NAME, creating the session if needed, and print the new pane's id.
The pane is kept after the program exits (remain-on-exit), so its exit status
can be read; remove it with 'runner tmux kill'.`,
		Example: `  runner tmux launch --name scratch -- bash
  runner tmux launch --name build --cwd ~/src/api --size 200x50 --env CI=1 -- ./test.sh`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			opts.argsLenAtDash = cmd.ArgsLenAtDash()
			return a.runTmuxLaunch(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.name, "name", "", "session name (created if missing)")
	_ = cmd.MarkFlagRequired("name")
	cmd.Flags().StringVar(&opts.cwd, "cwd", "", "start directory")
	cmd.Flags().StringVar(&opts.size, "size", "120x40", "size of a new session, WIDTHxHEIGHT")
	cmd.Flags().StringArrayVar(&opts.env, "env", nil, "set KEY=VALUE in the program's environment (repeatable)")
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// tmuxLaunchOptions are the arguments and flags of `runner tmux launch`.
type tmuxLaunchOptions struct {
	args          []string
	argsLenAtDash int // cobra's ArgsLenAtDash: where -- was in the arguments
	name          string
	cwd           string
	size          string
	env           []string
	asJSON        bool
}

func (a *app) runTmuxLaunch(ctx context.Context, opts tmuxLaunchOptions) error {
	if opts.argsLenAtDash != 0 {
		return fault.Usagef("put the program after --, e.g. runner tmux launch --name %s -- bash", opts.name)
	}
	if err := tmuxctl.ValidateSessionName(opts.name); err != nil {
		return fault.Usagef("--name: %v", err)
	}
	sz, err := tmuxctl.ParseSize(opts.size)
	if err != nil {
		return fault.Usagef("--size: %v", err)
	}
	if opts.cwd != "" {
		st, err := os.Stat(opts.cwd)
		if err != nil || !st.IsDir() {
			return fault.Usagef("--cwd: directory %q does not exist", opts.cwd)
		}
	}
	for _, kv := range opts.env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fault.Usagef("--env %q: want KEY=VALUE", kv)
		}
	}
	c, err := a.tmuxClient(ctx)
	if err != nil {
		return err
	}
	pane, err := c.Launch(ctx, tmuxctl.WindowSpec{Session: opts.name, Cwd: opts.cwd, Env: opts.env, Argv: opts.args, Size: sz, RemainOnExit: true})
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(map[string]any{"pane_id": pane, "session": opts.name, "socket": c.Socket(),
			"attach": strings.Join(c.AttachCommand(tmuxctl.SessionTarget(opts.name)), " ")})
	}
	fmt.Fprintln(a.out, pane)
	return nil
}

func (a *app) newTmuxCaptureCmd() *cobra.Command {
	var opts tmuxCaptureOptions
	cmd := &cobra.Command{
		Use:   "capture --pane ID [--lines N] [--join] [--escapes]",
		Short: "Print a pane's screen (or its last N lines, history included)",
		Example: `  runner tmux capture --pane %3
  runner tmux capture --pane %3 --lines 200 --join`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runTmuxCapture(cmd.Context(), opts)
		},
	}
	paneFlag(cmd, &opts.pane)
	cmd.Flags().IntVar(&opts.lines, "lines", 0, "the last N lines, history included (default: the visible screen)")
	cmd.Flags().BoolVar(&opts.join, "join", false, "join wrapped lines")
	cmd.Flags().BoolVar(&opts.escapes, "escapes", false, "keep colour and attribute escape sequences")
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// tmuxCaptureOptions are the arguments and flags of `runner tmux capture`.
type tmuxCaptureOptions struct {
	pane    string
	lines   int
	join    bool
	escapes bool
	asJSON  bool
}

func (a *app) runTmuxCapture(ctx context.Context, opts tmuxCaptureOptions) error {
	if opts.lines < 0 {
		return fault.Usagef("--lines must be positive")
	}
	c, err := a.tmuxClient(ctx)
	if err != nil {
		return err
	}
	text, err := c.Capture(ctx, opts.pane, tmuxctl.CaptureOptions{Lines: opts.lines, Join: opts.join, Escapes: opts.escapes})
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(map[string]any{"pane_id": opts.pane, "text": text})
	}
	w := a.out
	if opts.escapes {
		w = a.rawOut // asked for: the pane's escapes as they are
	}
	_, err = io.WriteString(w, text)
	return err
}

func (a *app) newTmuxListCmd() *cobra.Command {
	var opts tmuxListOptions
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the panes on the server",
		Example: `  runner tmux list
  runner tmux list --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runTmuxList(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// tmuxListOptions are the arguments and flags of `runner tmux list`.
type tmuxListOptions struct {
	asJSON bool
}

func (a *app) runTmuxList(ctx context.Context, opts tmuxListOptions) error {
	c, err := a.tmuxClient(ctx)
	if err != nil {
		return err
	}
	panes, err := c.ListPanes(ctx)
	if err != nil {
		return err
	}
	if opts.asJSON {
		if panes == nil {
			panes = []tmuxctl.PaneInfo{}
		}
		return a.printJSON(panes)
	}
	return tmuxctl.WritePanes(a.out, panes)
}

func (a *app) newTmuxKillCmd() *cobra.Command {
	var opts tmuxKillOptions
	cmd := &cobra.Command{
		Use:   "kill (--pane ID | --name NAME)",
		Short: "Kill a pane, or a whole session by name",
		Example: `  runner tmux kill --pane %4
  runner tmux kill --name scratch    # the session and every pane in it`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runTmuxKill(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.pane, "pane", "", "pane id to kill")
	cmd.Flags().StringVar(&opts.name, "name", "", "session name to kill")
	return cmd
}

// tmuxKillOptions are the arguments and flags of `runner tmux kill`.
type tmuxKillOptions struct {
	pane string
	name string
}

func (a *app) runTmuxKill(ctx context.Context, opts tmuxKillOptions) error {
	c, err := a.tmuxClient(ctx)
	if err != nil {
		return err
	}
	switch {
	case (opts.pane == "") == (opts.name == ""):
		return fault.Usagef("give exactly one of --pane ID or --name NAME")
	case opts.pane != "":
		return c.KillPane(ctx, opts.pane)
	default:
		return c.KillSession(ctx, opts.name)
	}
}
