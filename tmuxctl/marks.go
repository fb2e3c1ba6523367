// Marks: where a pane's output stood, so a later call reads only what came
// after it.

package tmuxctl

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Mark is a position in a pane's output: what came after it is "new".
type Mark struct {
	Line      int    // absolute line: history size + cursor row at the time
	CursorX   int    // cursor column on that line
	Alternate bool   // the pane was on the alternate screen
	Screen    string // the visible screen at the time (used for alternate-screen panes)
}

// MarkNow records the current end of a pane's output.
func (c *Client) MarkNow(ctx context.Context, pane string) (Mark, error) {
	p, err := c.Pane(ctx, pane)
	if err != nil {
		return Mark{}, err
	}
	screen, err := c.CaptureScreen(ctx, pane)
	if err != nil {
		return Mark{}, err
	}
	return Mark{Line: p.HistorySize + p.CursorY, CursorX: p.CursorX, Alternate: p.AlternateOn, Screen: screen}, nil
}

// SaveMark stores m in the pane (a user option), for LoadMark.
func (c *Client) SaveMark(ctx context.Context, pane string, m Mark) error {
	alt := 0
	if m.Alternate {
		alt = 1
	}
	return c.SetOption(ctx, ScopePane, pane, markOption, fmt.Sprintf("%d,%d,%d", m.Line, m.CursorX, alt))
}

// LoadMark returns the mark saved by SaveMark, and false if there is none.
// For an alternate-screen pane the saved mark has no screen; the current
// screen stands in for it.
func (c *Client) LoadMark(ctx context.Context, pane string) (Mark, bool, error) {
	v, err := c.ShowOption(ctx, pane, markOption)
	if err != nil || v == "" {
		return Mark{}, false, err
	}
	f := strings.Split(v, ",")
	if len(f) != 3 {
		return Mark{}, false, nil
	}
	line, err1 := strconv.Atoi(f[0])
	cx, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return Mark{}, false, nil
	}
	return Mark{Line: line, CursorX: cx, Alternate: f[2] == "1"}, true, nil
}

// NewOutput returns the pane's output that appeared after mark: for a normal
// screen the lines from the mark's position on (the part of the mark's line
// before its cursor column removed); for an alternate screen, the rows that
// differ from the mark's screen.
func (c *Client) NewOutput(ctx context.Context, pane string, m Mark) (string, error) {
	p, err := c.Pane(ctx, pane)
	if err != nil {
		return "", err
	}
	if p.AlternateOn || m.Alternate {
		screen, err := c.CaptureScreen(ctx, pane)
		if err != nil {
			return "", err
		}
		return diffRows(m.Screen, screen), nil
	}
	start := m.Line - p.HistorySize
	if start < -p.HistorySize {
		start = -p.HistorySize
	}
	out, err := c.Capture(ctx, pane, CaptureOptions{Start: strconv.Itoa(start), End: "-"})
	if err != nil {
		return "", err
	}
	if m.Line-p.HistorySize >= -p.HistorySize && m.CursorX > 0 {
		first, rest, _ := strings.Cut(out, "\n")
		r := []rune(first)
		if m.CursorX < len(r) {
			first = string(r[m.CursorX:])
		} else {
			first = ""
		}
		out = first + "\n" + rest
	}
	return out, nil
}

// diffRows returns the rows of now that differ from the same row of before.
func diffRows(before, now string) string {
	b := strings.Split(before, "\n")
	var out []string
	for i, row := range strings.Split(now, "\n") {
		if i >= len(b) || b[i] != row {
			out = append(out, row)
		}
	}
	return strings.Join(out, "\n")
}

// MarkForSend records, in the pane, where its output stands now, before
// text is sent to it: a later WaitPromptAfter (its sinceSend) matches only
// what came after.
func (c *Client) MarkForSend(ctx context.Context, pane string) error {
	m, err := c.MarkNow(ctx, pane)
	if err != nil {
		return err
	}
	return c.SaveMark(ctx, pane, m)
}

// WaitPromptAfter is WaitPrompt from the mark of the last MarkForSend
// (sinceSend, when the pane has one) or from now. A first look at the
// pane cut short by ctx's deadline is a *TimeoutError after timeout (the
// wait's own time ran out during it, as on a loaded machine), as a
// timeout of the wait itself is.
func (c *Client) WaitPromptAfter(ctx context.Context, pane string, re *regexp.Regexp, sinceSend bool, timeout time.Duration) (PromptMatch, error) {
	mark, ok, err := Mark{}, false, error(nil)
	if sinceSend {
		mark, ok, err = c.LoadMark(ctx, pane)
	}
	if err == nil && !ok {
		mark, err = c.MarkNow(ctx, pane)
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return PromptMatch{}, &TimeoutError{Pane: pane, What: "prompt /" + re.String() + "/", After: timeout}
		}
		return PromptMatch{}, err
	}
	return c.WaitPrompt(ctx, pane, re, mark)
}
