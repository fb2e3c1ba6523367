package tmuxctl

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FormatLiteral escapes s so that tmux's format expansion gives s back:
// every '#' is doubled, so "#(cmd)" runs nothing, "#{pane_id}" names no
// variable and "#[fg=red]" sets no style. Control characters (newlines,
// tabs, escapes) become spaces: a status line has one line.
func FormatLiteral(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r == '#':
			b.WriteString("##")
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// EscapeFormat doubles every '#' of s, for an argument tmux expands as a
// format: a start directory (-c), a session or window name (-s, -n), a
// pipe-pane or run-shell command. A folder or project named
// "p#(touch ~/x)" would otherwise run that command. Unlike FormatLiteral it
// keeps every other byte: a path stays the path.
func EscapeFormat(s string) string { return strings.ReplaceAll(s, "#", "##") }

// RunShellHook returns the tmux command, for a hook (set-hook), that runs
// script in the background: script is tmux-quoted whole, so the hook's
// parser takes it as one argument with no $, ~ or quote expansion. tmux
// expands formats in it when the hook fires: script's literal parts must
// be escaped with EscapeFormat (and shell-quoted with ShellQuote), its
// intended formats (#{pane_id}) left as they are.
func RunShellHook(script string) string { return "run-shell -b " + ShellQuote(script) }

// PaneDiedHooks returns the commands (for Batch, or a WindowSpec's Then)
// that make the death of pane (a pane id, or its window's target) and the
// closing of any window of session append a line to file: "PANE STATUS"
// when the pane's process exits (remain-on-exit keeps it), "closed" when a
// window goes. file may hold any byte.
func PaneDiedHooks(pane, session, file string) [][]string {
	f := EscapeFormat(ShellQuote(file))
	return [][]string{
		// pane-died is a window hook: set it on the pane's window.
		{"set-hook", "-w", "-t", pane, "pane-died", RunShellHook(`printf '%s %s\n' '#{pane_id}' '#{pane_dead_status}' >> ` + f)},
		{"set-hook", "-t", SessionTarget(session) + ":", "window-unlinked", RunShellHook(`echo closed >> ` + f)},
	}
}

// DisplayMessage shows text, literally (see FormatLiteral), on the status
// line of every client attached to session, for d (0: the server's
// display-time option). It returns how many clients it reached: none when
// nobody is attached, which is not an error. A leading '-' in text is no
// flag (the text follows "--") and a trailing ';' is kept (Arg).
func (c *Client) DisplayMessage(ctx context.Context, session, text string, d time.Duration) (int, error) {
	if err := ValidateSessionName(session); err != nil {
		return 0, err
	}
	target := SessionTarget(session)
	out, err := c.run(ctx, nil, "list-clients", "-t", target, "-F", "#{client_name}")
	if err != nil {
		return 0, fmt.Errorf("display a message in session %s: %w", session, err)
	}
	var cmds [][]string
	msg := FormatLiteral(text)
	for _, name := range strings.Split(strings.TrimSpace(out), "\n") {
		if name == "" {
			continue
		}
		cmd := []string{"display-message", "-c", name}
		if d > 0 {
			cmd = append(cmd, "-d", strconv.FormatInt(d.Milliseconds(), 10))
		}
		cmds = append(cmds, append(cmd, "-t", target+":", "--", msg))
	}
	if len(cmds) == 0 {
		return 0, nil
	}
	if err := c.Batch(ctx, cmds...); err != nil {
		return 0, fmt.Errorf("display a message in session %s: %w", session, err)
	}
	return len(cmds), nil
}
