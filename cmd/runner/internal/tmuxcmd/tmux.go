package tmuxcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

// NewCmd builds `runner tmux` and its commands over f.
func NewCmd(f *cmdkit.Factory) *cobra.Command {
	tc := &cmds{f: f}
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
	cmd.PersistentFlags().StringVar(&tc.host, "host", "", "drive the tmux of this registered host (runner host add) over ssh")
	cmd.AddCommand(tc.newLaunchCmd(), tc.newSendCmd(), tc.newKeysCmd(), tc.newCaptureCmd(),
		tc.newWaitPromptCmd(), tc.newWaitIdleCmd(), tc.newExecCmd(), tc.newListCmd(), tc.newKillCmd())
	return cmd
}

// cmds are the commands of `runner tmux`: the factory they run on, and
// --host (a registered host's tmux).
type cmds struct {
	f    *cmdkit.Factory
	host string
}

// client is the tmux client the commands drive: --socket's, or --host's.
func (tc *cmds) client(ctx context.Context) (*tmuxctl.Client, error) {
	return tc.f.Tmux(ctx, tc.host)
}

func paneFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "pane", "", "pane id, e.g. %12 (see 'runner tmux list')")
	_ = cmd.MarkFlagRequired("pane")
}

func (tc *cmds) newLaunchCmd() *cobra.Command {
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
		Args: cmdkit.Args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			opts.argsLenAtDash = cmd.ArgsLenAtDash()
			return tc.runTmuxLaunch(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.name, "name", "", "session name (created if missing)")
	_ = cmd.MarkFlagRequired("name")
	cmd.Flags().StringVar(&opts.cwd, "cwd", "", "start directory")
	cmd.Flags().StringVar(&opts.size, "size", "120x40", "size of a new session, WIDTHxHEIGHT")
	cmd.Flags().StringArrayVar(&opts.env, "env", nil, "set KEY=VALUE in the program's environment (repeatable)")
	tc.f.JSONFlag(cmd, &opts.asJSON)
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

func (tc *cmds) runTmuxLaunch(ctx context.Context, opts tmuxLaunchOptions) error {
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
	c, err := tc.client(ctx)
	if err != nil {
		return err
	}
	pane, err := c.Launch(ctx, tmuxctl.WindowSpec{Session: opts.name, Cwd: opts.cwd, Env: opts.env, Argv: opts.args, Size: sz, RemainOnExit: true})
	if err != nil {
		return err
	}
	if opts.asJSON {
		return tc.f.PrintJSON(map[string]any{"pane_id": pane, "session": opts.name, "socket": c.Socket(),
			"attach": strings.Join(c.AttachCommand(tmuxctl.SessionTarget(opts.name)), " ")})
	}
	fmt.Fprintln(tc.f.Out, pane)
	return nil
}

func (tc *cmds) newCaptureCmd() *cobra.Command {
	var opts tmuxCaptureOptions
	cmd := &cobra.Command{
		Use:   "capture --pane ID [--lines N] [--join] [--escapes]",
		Short: "Print a pane's screen (or its last N lines, history included)",
		Example: `  runner tmux capture --pane %3
  runner tmux capture --pane %3 --lines 200 --join`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return tc.runTmuxCapture(cmd.Context(), opts)
		},
	}
	paneFlag(cmd, &opts.pane)
	cmd.Flags().IntVar(&opts.lines, "lines", 0, "the last N lines, history included (default: the visible screen)")
	cmd.Flags().BoolVar(&opts.join, "join", false, "join wrapped lines")
	cmd.Flags().BoolVar(&opts.escapes, "escapes", false, "keep colour and attribute escape sequences")
	tc.f.JSONFlag(cmd, &opts.asJSON)
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

func (tc *cmds) runTmuxCapture(ctx context.Context, opts tmuxCaptureOptions) error {
	if opts.lines < 0 {
		return fault.Usagef("--lines must be positive")
	}
	c, err := tc.client(ctx)
	if err != nil {
		return err
	}
	text, err := c.Capture(ctx, opts.pane, tmuxctl.CaptureOptions{Lines: opts.lines, Join: opts.join, Escapes: opts.escapes})
	if err != nil {
		return err
	}
	if opts.asJSON {
		return tc.f.PrintJSON(map[string]any{"pane_id": opts.pane, "text": text})
	}
	w := tc.f.Out
	if opts.escapes {
		w = tc.f.RawOut // asked for: the pane's escapes as they are
	}
	_, err = io.WriteString(w, text)
	return err
}

func (tc *cmds) newListCmd() *cobra.Command {
	var opts tmuxListOptions
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the panes on the server",
		Example: `  runner tmux list
  runner tmux list --json`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return tc.runTmuxList(cmd.Context(), opts)
		},
	}
	tc.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// tmuxListOptions are the arguments and flags of `runner tmux list`.
type tmuxListOptions struct {
	asJSON bool
}

func (tc *cmds) runTmuxList(ctx context.Context, opts tmuxListOptions) error {
	c, err := tc.client(ctx)
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
		return tc.f.PrintJSON(panes)
	}
	return tmuxctl.WritePanes(tc.f.Out, panes)
}

func (tc *cmds) newKillCmd() *cobra.Command {
	var opts tmuxKillOptions
	cmd := &cobra.Command{
		Use:   "kill (--pane ID | --name NAME)",
		Short: "Kill a pane, or a whole session by name",
		Example: `  runner tmux kill --pane %4
  runner tmux kill --name scratch    # the session and every pane in it`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return tc.runTmuxKill(cmd.Context(), opts)
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

func (tc *cmds) runTmuxKill(ctx context.Context, opts tmuxKillOptions) error {
	c, err := tc.client(ctx)
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
