// runner tmux send and keys: text and keys into a pane.

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

func (a *app) newTmuxSendCmd() *cobra.Command {
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
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runTmuxSend(cmd.Context(), opts)
		},
	}
	paneFlag(cmd, &opts.pane)
	cmd.Flags().StringVar(&opts.file, "file", "", "read the text from file F ('-' for standard input)")
	cmd.Flags().BoolVar(&opts.noEnter, "no-enter", false, "paste only, do not press Enter")
	cmd.Flags().DurationVar(&opts.delay, "delay-enter", tmuxctl.DefaultEnterDelay, "pause between the paste and Enter")
	cmd.Flags().BoolVar(&opts.raw, "raw", false, "paste LF as LF (paste-buffer -r); by default LF becomes CR as in a terminal paste")
	cmd.Flags().IntVar(&opts.nudges, "nudges", 0, "press Enter again up to N times if the screen did not change")
	a.jsonFlag(cmd, &opts.asJSON)
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

func (a *app) runTmuxSend(ctx context.Context, opts tmuxSendOptions) error {
	text, err := a.readText(opts.args, opts.file)
	if err != nil {
		return err
	}
	c, err := a.tmuxClient(ctx)
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
			return a.printJSON(map[string]any{"pane_id": opts.pane, "bytes": len(text), "enter": false})
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
		if err := a.printJSON(map[string]any{"pane_id": opts.pane, "bytes": len(text), "enter": true, "confirmed": d.Confirmed, "enters": d.Enters, "reason": d.Reason}); err != nil {
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

// readText returns the text argument, or the content of --file ('-' = stdin).
func (a *app) readText(argv []string, file string) (string, error) {
	text, err := a.readTextRaw(argv, file)
	if err == nil {
		if _, n := tmuxctl.PasteText(text); n > 0 {
			fmt.Fprintf(a.errOut, "runner: warning: the text holds %d control character(s) (ESC, CR, …) that would act as keys in the agent's pane; they are removed before it is delivered (tab and newline are kept)\n", n)
		}
	}
	return text, err
}

// readTextRaw is readText without the warning.
func (a *app) readTextRaw(argv []string, file string) (string, error) {
	switch {
	case file != "" && len(argv) > 0:
		return "", fault.Usagef("give the text as an argument or with --file, not both")
	case file == "-":
		b, err := io.ReadAll(a.in)
		if err != nil {
			return "", fmt.Errorf("read standard input: %w", err)
		}
		return string(b), nil
	case file != "" && a.getenv(door.EnvConfined) != "":
		return a.readConfinedFile(file)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fault.Usagef("--file: %v", err)
		}
		return string(b), nil
	case len(argv) == 1:
		return argv[0], nil
	}
	return "", fault.Usagef("no text: give TEXT, --file F or --file -")
}

func (a *app) newTmuxKeysCmd() *cobra.Command {
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
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, keys []string) error {
			opts.args = keys
			return a.runTmuxKeys(cmd.Context(), opts)
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

func (a *app) runTmuxKeys(ctx context.Context, opts tmuxKeysOptions) error {
	for _, k := range opts.args {
		if !tmuxctl.ValidKey(k) {
			return fault.Usagef("%q is not a key name (Enter, Escape, C-c, Up, F1…, or one character); send text with 'runner tmux send'", k)
		}
	}
	c, err := a.tmuxClient(ctx)
	if err != nil {
		return err
	}
	return c.SendKeys(ctx, opts.pane, opts.args...)
}
