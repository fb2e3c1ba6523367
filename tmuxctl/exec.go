package tmuxctl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ExecResult is the outcome of Exec.
type ExecResult struct {
	Output   string        `json:"output"`
	ExitCode int           `json:"exit_code"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// ErrNotAtShell is wrapped when Exec targets a pane whose foreground process
// is not a shell.
var ErrNotAtShell = errors.New("pane is not at a shell prompt")

// ErrHistoryOverflow is wrapped when a command's output no longer fits in the
// pane's scrollback, so it cannot be returned whole.
var ErrHistoryOverflow = errors.New("output exceeded the pane's scrollback")

// Exec runs a shell command line in a pane whose foreground process is a
// shell and returns its output and exact exit status.
//
// The command is framed by two markers printed with printf from a format and
// a random token, so the marker text appears only in the output, never in the
// echoed command line. Output is read from the scrollback with wrapped lines
// joined, so it may be longer than the screen (up to the pane's
// history-limit). Trailing spaces of lines and trailing blank lines are not
// preserved (capture drops them).
func (c *Client) Exec(ctx context.Context, pane, command string) (ExecResult, error) {
	start := time.Now()
	var res ExecResult
	p, err := c.alive(ctx, pane)
	if err != nil {
		return res, err
	}
	if !IsShell(p.CurrentCommand) {
		return res, fmt.Errorf("exec in %s: %w (it runs %q; wait for it to finish or use 'runner tmux send')", pane, ErrNotAtShell, p.CurrentCommand)
	}
	if p.InMode {
		if _, err := c.run(ctx, nil, "send-keys", "-t", pane, "-X", "cancel"); err != nil {
			return res, fmt.Errorf("exec in %s: leave copy mode: %w", pane, err)
		}
	}
	token, err := randomToken()
	if err != nil {
		return res, err
	}
	status := `"$?"`
	if strings.TrimPrefix(p.CurrentCommand, "-") == "fish" {
		status = `"$status"`
	}
	startMark := "RUNNER-EXEC-START:" + token
	endPrefix := "RUNNER-EXEC-END:" + token + ":"
	// The printf formats keep the marker text out of the echoed command.
	script := fmt.Sprintf("printf '\\n%%s-%%s:%%s\\n' RUNNER EXEC-START %s\n%s\nprintf '\\n%%s-%%s:%%s:%%s\\n' RUNNER EXEC-END %s %s",
		token, strings.TrimRight(command, "\n"), token, status)
	if err := c.Send(ctx, pane, script, SendOptions{Enter: true, EnterDelay: 10 * time.Millisecond}); err != nil {
		return res, fmt.Errorf("exec in %s: %w", pane, err)
	}
	endRe := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(endPrefix) + `(\d+)\s*$`)
	var last string
	for poll := 5 * time.Millisecond; ; poll = min(poll*2, 100*time.Millisecond) {
		screen, err := c.Capture(ctx, pane, CaptureOptions{Join: true})
		if err != nil {
			if ctx.Err() != nil {
				return res, waitErr(ctx, pane, "the command to finish", start, last)
			}
			return res, err
		}
		last = screen
		if endRe.MatchString(screen) {
			break
		}
		info, err := c.Pane(ctx, pane)
		if err != nil {
			return res, err
		}
		if info.Dead {
			res.ExitCode = info.DeadStatus
			return res, fmt.Errorf("exec in %s: the shell exited during the command: %w", pane, &DeadError{Pane: pane, Status: info.DeadStatus})
		}
		if err := sleepCtx(ctx, poll); err != nil {
			return res, waitErr(ctx, pane, "the command to finish", start, last)
		}
	}
	all, err := c.Capture(ctx, pane, CaptureOptions{Start: "-", End: "-", Join: true})
	if err != nil {
		return res, err
	}
	out, code, err := extractExec(all, startMark, endRe)
	if err != nil {
		return res, fmt.Errorf("exec in %s: %w", pane, err)
	}
	res.Output, res.ExitCode, res.Elapsed = out, code, time.Since(start)
	return res, nil
}

// extractExec finds the output between the last start marker line and the
// end marker line after it.
func extractExec(capture, startMark string, endRe *regexp.Regexp) (string, int, error) {
	lines := strings.Split(capture, "\n")
	end := -1
	code := 0
	for i := len(lines) - 1; i >= 0; i-- {
		if m := endRe.FindStringSubmatch(lines[i]); m != nil {
			end = i
			code, _ = strconv.Atoi(m[1])
			break
		}
	}
	if end < 0 {
		return "", 0, errors.New("end marker not found")
	}
	begin := -1
	for i := end - 1; i >= 0; i-- {
		if strings.TrimRight(lines[i], " ") == startMark {
			begin = i
			break
		}
	}
	if begin < 0 {
		return "", code, fmt.Errorf("%w (exit status %d; raise the pane's history-limit or redirect the output to a file)", ErrHistoryOverflow, code)
	}
	body := lines[begin+1 : end]
	// The end marker is printed after a newline, which leaves one empty
	// line when the output ended with a newline.
	if n := len(body); n > 0 && body[n-1] == "" {
		body = body[:n-1]
	}
	for i, l := range body {
		body[i] = strings.TrimRight(l, " ")
	}
	out := strings.Join(body, "\n")
	if out != "" {
		out += "\n"
	}
	return out, code, nil
}

func randomToken() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
