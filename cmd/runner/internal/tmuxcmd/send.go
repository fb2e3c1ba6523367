// runner tmux send and keys: text and keys into a pane.

package tmuxcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

func (tc *cmds) newSendCmd() *cobra.Command {
	var opts tmuxSendOptions
	cmd := &cobra.Command{
		Use:   "send --pane ID [--no-enter] [--delay-enter 150ms] (TEXT | --file F | --file -)",
		Short: "Paste text into a pane and press Enter",
		Long: `Paste TEXT byte-exact into the pane (through a tmux paste buffer, as a
bracketed paste when the program enabled it), wait --delay-enter, then press
Enter. Text is never interpreted as key names, flags or tmux commands.

After Enter, send checks for one second that the screen changed. With
--nudges N it presses Enter again up to N times if nothing happened (the text
is never pasted twice) and exits 1 if there was still no effect.`,
		Example: `  runner tmux send --pane %3 "git status"
  runner tmux send --pane %3 --no-enter "git commit -m 'wip'"`,
		Args: cmdkit.Args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return tc.runTmuxSend(cmd.Context(), opts)
		},
	}
	paneFlag(cmd, &opts.pane)
	cmd.Flags().StringVar(&opts.file, "file", "", "read the text from file F ('-' for standard input)")
	cmd.Flags().BoolVar(&opts.noEnter, "no-enter", false, "paste only, do not press Enter")
	cmd.Flags().DurationVar(&opts.delay, "delay-enter", tmuxctl.DefaultEnterDelay, "pause between the paste and Enter")
	cmd.Flags().BoolVar(&opts.raw, "raw", false, "paste LF as LF (paste-buffer -r); by default LF becomes CR as in a terminal paste")
	cmd.Flags().IntVar(&opts.nudges, "nudges", 0, "press Enter again up to N times if the screen did not change")
	tc.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// tmuxSendOptions are the arguments and flags of `runner tmux send`.
type tmuxSendOptions struct {
	args    []string
	pane    string
	file    string
	noEnter bool
	delay   time.Duration
	raw     bool
	nudges  int
	asJSON  bool
}

func (tc *cmds) runTmuxSend(ctx context.Context, opts tmuxSendOptions) error {
	text, err := tc.f.ReadText(opts.args, opts.file)
	if err != nil {
		return err
	}
	c, err := tc.client(ctx)
	if err != nil {
		return err
	}
	if err := c.MarkForSend(ctx, opts.pane); err != nil {
		return err
	}
	if opts.noEnter {
		if err := c.Send(ctx, opts.pane, text, tmuxctl.SendOptions{Raw: opts.raw, LeaveMode: true}); err != nil {
			return err
		}
		if opts.asJSON {
			return tc.f.PrintJSON(map[string]any{"pane_id": opts.pane, "bytes": len(text), "enter": false})
		}
		return nil
	}
	n := opts.nudges
	if n == 0 {
		n = -1
	}
	d, err := c.Deliver(ctx, opts.pane, text, tmuxctl.DeliverOptions{EnterDelay: delayOrNone(opts.delay), Raw: opts.raw, LeaveMode: true, Nudges: n})
	if err != nil {
		return err
	}
	if opts.asJSON {
		if err := tc.f.PrintJSON(map[string]any{"pane_id": opts.pane, "bytes": len(text), "enter": true, "confirmed": d.Confirmed, "enters": d.Enters, "reason": d.Reason}); err != nil {
			return err
		}
	}
	if !d.Confirmed && opts.nudges > 0 {
		return fmt.Errorf("send to %s: %s (the text is in the prompt; attach with 'tmux -L %s attach' to look)", opts.pane, d.Reason, c.Socket())
	}
	return nil
}

func delayOrNone(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

func (tc *cmds) newKeysCmd() *cobra.Command {
	var opts tmuxKeysOptions
	cmd := &cobra.Command{
		Use:   "keys --pane ID KEY...",
		Short: "Send named keys (Enter, Escape, C-c, Up, F5, y, …) to a pane",
		Long: `Send keys by name: Enter, Escape, Tab, BSpace, Up, Down, Left, Right, Home,
End, PageUp, PageDown, F1…F12, a single character, any of them with C-, M- or
S- (C-c, M-Enter). A word that is not a key name is refused: use
'runner tmux send' for text.`,
		Example: `  runner tmux keys --pane %3 C-c
  runner tmux keys --pane %3 y Enter`,
		Args: cmdkit.Args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, keys []string) error {
			opts.args = keys
			return tc.runTmuxKeys(cmd.Context(), opts)
		},
	}
	paneFlag(cmd, &opts.pane)
	return cmd
}

// tmuxKeysOptions are the arguments and flags of `runner tmux keys`.
type tmuxKeysOptions struct {
	args []string
	pane string
}

func (tc *cmds) runTmuxKeys(ctx context.Context, opts tmuxKeysOptions) error {
	for _, k := range opts.args {
		if !tmuxctl.ValidKey(k) {
			return fault.Usagef("%q is not a key name (Enter, Escape, C-c, Up, F1…, or one character); send text with 'runner tmux send'", k)
		}
	}
	c, err := tc.client(ctx)
	if err != nil {
		return err
	}
	return c.SendKeys(ctx, opts.pane, opts.args...)
}
