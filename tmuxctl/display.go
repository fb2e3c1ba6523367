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
