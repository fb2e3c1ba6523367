package tmuxctl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
)

// CaptureOptions selects what Capture returns. The zero value is the visible
// screen as plain text.
type CaptureOptions struct {
	// Lines, if > 0, returns the last Lines non-blank-tail lines of history
	// plus screen (trailing empty rows are dropped first).
	Lines int
	// Start and End select a range like capture-pane -S/-E: 0 is the first
	// visible line, negative numbers reach into history, "-" means the
	// start of history (Start) or the end of the screen (End). Empty means
	// the visible screen. Ignored when Lines > 0.
	Start, End string
	Join       bool // join wrapped lines (-J)
	Escapes    bool // keep colour and attribute escapes (-e)
}

// Capture returns pane content as selected by opts. Capturing a dead pane
// works (its last screen is kept by remain-on-exit); a missing pane is an
// error wrapping ErrNotFound.
func (c *Client) Capture(ctx context.Context, pane string, opts CaptureOptions) (string, error) {
	if err := validatePaneID(pane); err != nil {
		return "", err
	}
	args := []string{"capture-pane", "-p", "-t", pane}
	if opts.Join {
		args = append(args, "-J")
	}
	if opts.Escapes {
		args = append(args, "-e")
	}
	start, end := opts.Start, opts.End
	if opts.Lines > 0 {
		start, end = "-"+strconv.Itoa(opts.Lines), ""
	}
	for _, r := range []struct{ flag, v string }{{"-S", start}, {"-E", end}} {
		if r.v == "" {
			continue
		}
		if r.v != "-" {
			if _, err := strconv.Atoi(r.v); err != nil {
				return "", fmt.Errorf("capture %s: line %q: want a number or '-': %w", pane, r.v, ErrBadTarget)
			}
		}
		args = append(args, r.flag, r.v)
	}
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		return "", fmt.Errorf("capture %s: %w", pane, err)
	}
	if opts.Lines > 0 {
		out = lastLines(out, opts.Lines)
	}
	return out, nil
}

// CaptureScreen returns the visible screen as plain text, one line per row.
func (c *Client) CaptureScreen(ctx context.Context, pane string) (string, error) {
	return c.Capture(ctx, pane, CaptureOptions{})
}

// lastLines keeps the last n lines of s, trailing blank lines dropped,
// each ending in a newline (as a capture's).
func lastLines(s string, n int) string {
	if l := textutil.LastLines(s, n); l != "" {
		return l + "\n"
	}
	return ""
}

// PaneScreen returns the pane's information and its visible screen from
// one tmux invocation (display-message and capture-pane chained), half the
// cost of Pane plus CaptureScreen.
func (c *Client) PaneScreen(ctx context.Context, pane string) (PaneInfo, string, error) {
	p, screen, _, err := c.paneScreenLoading(ctx, pane, "")
	return p, screen, err
}

// paneScreenLoading is PaneScreen that also loads text (made fit by
// PasteText), through stdin, into a new buffer it names (buf; "" when
// there is no text), in the same call. The buffer is loaded only when the
// pane was found (tmux runs no command of a list after one that failed);
// the caller pastes or deletes it.
func (c *Client) paneScreenLoading(ctx context.Context, pane, text string) (p PaneInfo, screen, buf string, err error) {
	if err := validatePaneID(pane); err != nil {
		return PaneInfo{}, "", "", err
	}
	args := []string{"display-message", "-p", "-t", pane, paneFormat(), ";", "capture-pane", "-p", "-t", pane}
	var in io.Reader
	if text, _ = PasteText(text); text != "" {
		buf = c.nextBufferName()
		args = append(args, ";", "load-buffer", "-b", buf, "-")
		in = strings.NewReader(text)
	}
	out, err := c.run(ctx, in, args...)
	if err != nil {
		if buf != "" {
			_, _ = c.run(context.WithoutCancel(ctx), nil, "delete-buffer", "-b", buf)
		}
		return PaneInfo{}, "", "", fmt.Errorf("pane %s: %w", pane, err)
	}
	p, screen, err = parsePaneScreen(pane, out)
	if err != nil && buf != "" {
		_, _ = c.run(context.WithoutCancel(ctx), nil, "delete-buffer", "-b", buf)
	}
	return p, screen, buf, err
}

// paneScreenPasting is paneScreenLoading that also pastes the buffer, in
// the same call, when the pane is alive and not in a mode at that moment
// (pasted: the paste ran; tmux decides it with if-shell -F, no shell).
// raw is paste-buffer -r. The screen is the one before the paste. A pane
// that was not ready gets no paste: the caller looks at p and pastes (or
// deletes) buf itself. The paste says so on stdout after the screen, with
// a word made for this call, which no screen can have guessed. With
// enter, Enter is pressed right after the paste, in the same call.
func (c *Client) paneScreenPasting(ctx context.Context, pane, text string, raw, enter bool) (p PaneInfo, screen, buf string, pasted bool, err error) {
	if err := validatePaneID(pane); err != nil {
		return PaneInfo{}, "", "", false, err
	}
	if text, _ = PasteText(text); text == "" {
		p, screen, buf, err = c.paneScreenLoading(ctx, pane, "")
		return p, screen, buf, false, err
	}
	buf = c.nextBufferName()
	word := pastedWord()
	paste := "paste-buffer -d -p -b " + buf + " -t " + pane
	if raw {
		paste += " -r"
	}
	if enter {
		paste += " ; send-keys -t " + pane + " Enter"
	}
	args := []string{"display-message", "-p", "-t", pane, paneFormat(), ";", "capture-pane", "-p", "-t", pane,
		";", "load-buffer", "-b", buf, "-",
		";", "if-shell", "-F", "-t", pane, "#{?pane_in_mode,0,#{?pane_dead,0,1}}", paste + " ; display-message -p " + word}
	out, err := c.run(ctx, strings.NewReader(text), args...)
	if err != nil {
		_, _ = c.run(context.WithoutCancel(ctx), nil, "delete-buffer", "-b", buf)
		return PaneInfo{}, "", "", false, fmt.Errorf("pane %s: %w", pane, err)
	}
	if rest, ok := strings.CutSuffix(out, "\n"+word+"\n"); ok {
		out, pasted = rest+"\n", true
	}
	p, screen, err = parsePaneScreen(pane, out)
	if err != nil && !pasted {
		_, _ = c.run(context.WithoutCancel(ctx), nil, "delete-buffer", "-b", buf)
	}
	return p, screen, buf, pasted, err
}

// pastedWord is a word no one can guess before the call that prints it.
func pastedWord() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "runner-pasted-" + hex.EncodeToString(b[:])
}

// parsePaneScreen reads the output of display-message with paneFormat
// then capture-pane.
func parsePaneScreen(pane, out string) (PaneInfo, string, error) {
	line, screen, _ := strings.Cut(out, "\n")
	p, err := parsePaneLine(line)
	if err != nil {
		return PaneInfo{}, "", fmt.Errorf("pane %s: %w", pane, err)
	}
	if p.ID != pane {
		return PaneInfo{}, "", fmt.Errorf("pane %s: %w", pane, ErrNotFound)
	}
	return p, screen, nil
}
