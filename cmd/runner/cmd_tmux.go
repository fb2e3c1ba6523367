package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/runner/exit"

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
	var (
		name, cwd, size string
		env             []string
		asJSON          bool
	)
	cmd := &cobra.Command{
		Use:   "launch --name NAME [--cwd DIR] [--size 120x40] [--env K=V]... -- ARGV...",
		Short: "Start a program in a new pane and print the pane id",
		Long: `Start ARGV (executed directly, never through a shell) in a new window of
session NAME, creating the session if needed, and print the new pane's id.
The pane is kept after the program exits (remain-on-exit), so its exit status
can be read; remove it with 'runner tmux kill'.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return exit.Usagef("put the program after --, e.g. runner tmux launch --name %s -- bash", name)
			}
			if err := tmuxctl.ValidateSessionName(name); err != nil {
				return exit.Usagef("--name: %v", err)
			}
			sz, err := tmuxctl.ParseSize(size)
			if err != nil {
				return exit.Usagef("--size: %v", err)
			}
			if cwd != "" {
				st, err := os.Stat(cwd)
				if err != nil || !st.IsDir() {
					return exit.Usagef("--cwd: directory %q does not exist", cwd)
				}
			}
			for _, kv := range env {
				if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
					return exit.Usagef("--env %q: want KEY=VALUE", kv)
				}
			}
			c, err := a.tmuxClient()
			if err != nil {
				return err
			}
			pane, err := c.Launch(cmd.Context(), tmuxctl.WindowSpec{Session: name, Cwd: cwd, Env: env, Argv: argv, Size: sz, RemainOnExit: true})
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(map[string]any{"pane_id": pane, "session": name, "socket": c.Socket(),
					"attach": strings.Join(c.AttachCommand(tmuxctl.SessionTarget(name)), " ")})
			}
			fmt.Fprintln(a.out, pane)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "session name (created if missing)")
	_ = cmd.MarkFlagRequired("name")
	cmd.Flags().StringVar(&cwd, "cwd", "", "start directory")
	cmd.Flags().StringVar(&size, "size", "120x40", "size of a new session, WIDTHxHEIGHT")
	cmd.Flags().StringArrayVar(&env, "env", nil, "set KEY=VALUE in the program's environment (repeatable)")
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func (a *app) newTmuxSendCmd() *cobra.Command {
	var (
		pane, file string
		noEnter    bool
		delay      time.Duration
		raw        bool
		nudges     int
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "send --pane ID [--no-enter] [--delay-enter 150ms] (TEXT | --file F | --file -)",
		Short: "Paste text into a pane and press Enter",
		Long: `Paste TEXT byte-exact into the pane (through a tmux paste buffer, as a
bracketed paste when the program enabled it), wait --delay-enter, then press
Enter. Text is never interpreted as key names, flags or tmux commands.

After Enter, send checks for one second that the screen changed. With
--nudges N it presses Enter again up to N times if nothing happened (the text
is never pasted twice) and exits 1 if there was still no effect.`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			text, err := a.readText(argv, file)
			if err != nil {
				return err
			}
			c, err := a.tmuxClient()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			mark, err := c.MarkNow(ctx, pane)
			if err != nil {
				return err
			}
			if err := c.SaveMark(ctx, pane, mark); err != nil {
				return err
			}
			if noEnter {
				if err := c.Send(ctx, pane, text, tmuxctl.SendOptions{Raw: raw, LeaveMode: true}); err != nil {
					return err
				}
				if asJSON {
					return a.printJSON(map[string]any{"pane_id": pane, "bytes": len(text), "enter": false})
				}
				return nil
			}
			n := nudges
			if n == 0 {
				n = -1
			}
			d, err := c.Deliver(ctx, pane, text, tmuxctl.DeliverOptions{EnterDelay: delayOrNone(delay), Raw: raw, LeaveMode: true, Nudges: n})
			if err != nil {
				return err
			}
			if asJSON {
				if err := a.printJSON(map[string]any{"pane_id": pane, "bytes": len(text), "enter": true, "confirmed": d.Confirmed, "enters": d.Enters, "reason": d.Reason}); err != nil {
					return err
				}
			}
			if !d.Confirmed && nudges > 0 {
				return fmt.Errorf("send to %s: %s (the text is in the prompt; attach with 'tmux -L %s attach' to look)", pane, d.Reason, c.Socket())
			}
			return nil
		},
	}
	paneFlag(cmd, &pane)
	cmd.Flags().StringVar(&file, "file", "", "read the text from file F ('-' for standard input)")
	cmd.Flags().BoolVar(&noEnter, "no-enter", false, "paste only, do not press Enter")
	cmd.Flags().DurationVar(&delay, "delay-enter", tmuxctl.DefaultEnterDelay, "pause between the paste and Enter")
	cmd.Flags().BoolVar(&raw, "raw", false, "paste LF as LF (paste-buffer -r); by default LF becomes CR as in a terminal paste")
	cmd.Flags().IntVar(&nudges, "nudges", 0, "press Enter again up to N times if the screen did not change")
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func delayOrNone(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// readText returns the text argument, or the content of --file ('-' = stdin).
func (a *app) readText(argv []string, file string) (string, error) {
	switch {
	case file != "" && len(argv) > 0:
		return "", exit.Usagef("give the text as an argument or with --file, not both")
	case file == "-":
		b, err := io.ReadAll(a.in)
		if err != nil {
			return "", fmt.Errorf("read standard input: %w", err)
		}
		return string(b), nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", exit.Usagef("--file: %v", err)
		}
		return string(b), nil
	case len(argv) == 1:
		return argv[0], nil
	}
	return "", exit.Usagef("no text: give TEXT, --file F or --file -")
}

func (a *app) newTmuxKeysCmd() *cobra.Command {
	var pane string
	cmd := &cobra.Command{
		Use:   "keys --pane ID KEY...",
		Short: "Send named keys (Enter, Escape, C-c, Up, F5, y, …) to a pane",
		Long: `Send keys by name: Enter, Escape, Tab, BSpace, Up, Down, Left, Right, Home,
End, PageUp, PageDown, F1…F12, a single character, any of them with C-, M- or
S- (C-c, M-Enter). A word that is not a key name is refused: use
'runner tmux send' for text.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, keys []string) error {
			for _, k := range keys {
				if !tmuxctl.ValidKey(k) {
					return exit.Usagef("%q is not a key name (Enter, Escape, C-c, Up, F1…, or one character); send text with 'runner tmux send'", k)
				}
			}
			c, err := a.tmuxClient()
			if err != nil {
				return err
			}
			return c.SendKeys(cmd.Context(), pane, keys...)
		},
	}
	paneFlag(cmd, &pane)
	return cmd
}

func (a *app) newTmuxCaptureCmd() *cobra.Command {
	var (
		pane          string
		lines         int
		join, escapes bool
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "capture --pane ID [--lines N] [--join] [--escapes]",
		Short: "Print a pane's screen (or its last N lines, history included)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if lines < 0 {
				return exit.Usagef("--lines must be positive")
			}
			c, err := a.tmuxClient()
			if err != nil {
				return err
			}
			text, err := c.Capture(cmd.Context(), pane, tmuxctl.CaptureOptions{Lines: lines, Join: join, Escapes: escapes})
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(map[string]any{"pane_id": pane, "text": text})
			}
			_, err = io.WriteString(a.out, text)
			return err
		},
	}
	paneFlag(cmd, &pane)
	cmd.Flags().IntVar(&lines, "lines", 0, "the last N lines, history included (default: the visible screen)")
	cmd.Flags().BoolVar(&join, "join", false, "join wrapped lines")
	cmd.Flags().BoolVar(&escapes, "escapes", false, "keep colour and attribute escape sequences")
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func (a *app) newTmuxListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the panes on the server",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.tmuxClient()
			if err != nil {
				return err
			}
			panes, err := c.ListPanes(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				if panes == nil {
					panes = []tmuxctl.PaneInfo{}
				}
				return a.printJSON(panes)
			}
			tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PANE\tSESSION\tWINDOW\tCOMMAND\tSTATE\tSIZE")
			for _, p := range panes {
				state := fmt.Sprintf("running (pid %d)", p.PID)
				if p.Dead {
					state = fmt.Sprintf("dead (status %d)", p.DeadStatus)
				} else if p.InMode {
					state += ", copy mode"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d:%s\t%s\t%s\t%dx%d\n", p.ID, p.Session, p.WindowIndex, p.WindowName, p.CurrentCommand, state, p.Width, p.Height)
			}
			return tw.Flush()
		},
	}
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func (a *app) newTmuxKillCmd() *cobra.Command {
	var pane, name string
	cmd := &cobra.Command{
		Use:   "kill (--pane ID | --name NAME)",
		Short: "Kill a pane, or a whole session by name",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.tmuxClient()
			if err != nil {
				return err
			}
			switch {
			case (pane == "") == (name == ""):
				return exit.Usagef("give exactly one of --pane ID or --name NAME")
			case pane != "":
				return c.KillPane(cmd.Context(), pane)
			default:
				return c.KillSession(cmd.Context(), name)
			}
		},
	}
	cmd.Flags().StringVar(&pane, "pane", "", "pane id to kill")
	cmd.Flags().StringVar(&name, "name", "", "session name to kill")
	return cmd
}
