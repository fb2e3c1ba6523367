package tmuxctl

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/ctxtime"
	"github.com/runner-cli/runner/internal/textutil"
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

// Exec runs a shell command line in a pane whose foreground process is a
// shell and returns its output and exact exit status.
//
// The command is framed by two markers printed with printf from a format and
// a random token, so the marker text appears only in the output, never in the
// echoed command line. The output is read from the pane's output stream, not
// from the screen: for the duration of the command the pane is piped to a
// private file (pipe-pane), or, when the pane already has runner's transcript
// pipe, that transcript is read from the offset where the command started.
// So an output of any length comes back whole, whatever the pane's
// history-limit. Terminal escape sequences are removed and carriage returns
// applied as a terminal would (a progress line shows its last state); lines
// end with "\n", and a non-empty output always ends with one. A pane piped
// elsewhere by someone else is read from its scrollback instead, which
// holds at most its history-limit (ErrHistoryOverflow beyond).
func (c *Client) Exec(ctx context.Context, pane, command string) (ExecResult, error) {
	start := clock.Now()
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

	// Where the output is read from: a private pipe, runner's transcript,
	// or (a foreign pipe) the scrollback.
	file, offset := "", int64(0)
	switch {
	case c.Remote():
		// The files are on the other machine: the scrollback.
	case p.Pipe:
		if t, _ := c.ShowOption(ctx, pane, TranscriptOption); t != "" {
			if fi, err := os.Stat(t); err == nil {
				file, offset = t, fi.Size()
			}
		}
	default:
		dir, err := os.MkdirTemp("", "runner-exec-*")
		if err != nil {
			return res, fmt.Errorf("exec in %s: %w", pane, err)
		}
		defer os.RemoveAll(dir)
		file = filepath.Join(dir, "output")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			return res, fmt.Errorf("exec in %s: %w", pane, err)
		}
		if err := c.PipePane(ctx, pane, file); err != nil {
			return res, fmt.Errorf("exec in %s: %w", pane, c.deadOr(ctx, pane, err))
		}
		defer func() { _ = c.StopPipe(context.WithoutCancel(ctx), pane) }()
	}
	if err := c.Send(ctx, pane, script, SendOptions{Enter: true, EnterDelay: 10 * time.Millisecond}); err != nil {
		return res, fmt.Errorf("exec in %s: %w", pane, err)
	}
	if file == "" {
		return c.execFromHistory(ctx, pane, start, startMark, endPrefix)
	}
	return c.execFromFile(ctx, pane, file, offset, start, startMark, endPrefix)
}

// execFromFile reads the command's output from file (from offset) until
// the end marker with the exit status shows, checking every half second
// that the shell is still there.
func (c *Client) execFromFile(ctx context.Context, pane, file string, offset int64, start time.Time, startMark, endPrefix string) (ExecResult, error) {
	var res ExecResult
	endRe := regexp.MustCompile(regexp.QuoteMeta(endPrefix) + `(\d+)\r?\n`)
	var raw []byte
	lastCheck := clock.Now()
	for poll := 5 * time.Millisecond; ; poll = min(poll*2, 100*time.Millisecond) {
		more, err := readFrom(file, offset+int64(len(raw)))
		if err != nil {
			return res, fmt.Errorf("exec in %s: read its output from %s: %w", pane, file, err)
		}
		if len(more) > 0 {
			raw = append(raw, more...)
			poll = 5 * time.Millisecond
		}
		if m := endRe.FindSubmatchIndex(raw); m != nil {
			code, _ := strconv.Atoi(string(raw[m[2]:m[3]]))
			out, ok := execOutput(raw[:m[0]], startMark)
			if !ok {
				return res, fmt.Errorf("exec in %s: the start marker is missing from the output (the pane's pipe was changed during the command?)", pane)
			}
			res.Output, res.ExitCode, res.Elapsed = out, code, clock.Since(start)
			return res, nil
		}
		if clock.Since(lastCheck) > 500*time.Millisecond {
			lastCheck = clock.Now()
			if err := c.shellAlive(ctx, pane, &res); err != nil {
				return res, err
			}
		}
		if err := ctxtime.Sleep(ctx, poll); err != nil {
			return res, waitErr(ctx, pane, "the command to finish", start, lastLines(StripEscapes(string(raw)), 5))
		}
	}
}

// readFrom returns the bytes of file from offset to its end.
func readFrom(file string, offset int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// execOutput turns the raw output before the end marker into the command's
// output: what follows the start marker's line, with escape sequences
// removed, carriage returns applied, and the newline printed before the end
// marker taken off.
func execOutput(raw []byte, startMark string) (string, bool) {
	i := bytes.Index(raw, []byte(startMark))
	if i < 0 {
		return "", false
	}
	body := raw[i+len(startMark):]
	if j := bytes.IndexByte(body, '\n'); j >= 0 {
		body = body[j+1:]
	} else {
		body = nil
	}
	text := renderLines(StripEscapes(string(body)))
	// The end marker is printed after a newline: it ends an output that
	// has no newline of its own, or leaves one empty line.
	text = strings.TrimSuffix(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text, true
}

// renderLines applies carriage returns and backspaces within each line as a
// terminal would ("50%\r100%" shows "100%"); "\r\n" is a line end.
func renderLines(s string) string {
	if !strings.ContainsAny(s, "\r\b") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if !strings.ContainsAny(line, "\r\b") {
			b.WriteString(line)
			b.WriteByte('\n')
			continue
		}
		var cells []rune
		col := 0
		for _, r := range line {
			switch r {
			case '\r':
				col = 0
			case '\b':
				col = max(col-1, 0)
			default:
				if col < len(cells) {
					cells[col] = r
				} else {
					cells = append(cells, r)
				}
				col++
			}
		}
		b.WriteString(string(cells))
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// StripEscapes removes terminal escape sequences from s: it is
// textutil.StripEscapes, kept here for tmuxctl's callers.
func StripEscapes(s string) string { return textutil.StripEscapes(s) }

// execFromHistory waits for the end marker on the screen and reads the
// output from the pane's scrollback (a pane piped elsewhere).
func (c *Client) execFromHistory(ctx context.Context, pane string, start time.Time, startMark, endPrefix string) (ExecResult, error) {
	var res ExecResult
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
		if err := c.shellAlive(ctx, pane, &res); err != nil {
			return res, err
		}
		if err := ctxtime.Sleep(ctx, poll); err != nil {
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
	res.Output, res.ExitCode, res.Elapsed = out, code, clock.Since(start)
	return res, nil
}

// ErrHistoryOverflow is wrapped when a command's output, read from the
// scrollback of a pane whose output is piped elsewhere, no longer fits in
// it, so it cannot be returned whole.
var ErrHistoryOverflow = errors.New("output exceeded the pane's scrollback")

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

// shellAlive checks that the pane running an exec's command still lives: a
// dead one's status goes into res, and the error says the shell exited.
func (c *Client) shellAlive(ctx context.Context, pane string, res *ExecResult) error {
	info, err := c.Pane(ctx, pane)
	if err != nil {
		return err
	}
	if info.Dead {
		res.ExitCode = info.DeadStatus
		return fmt.Errorf("exec in %s: the shell exited during the command: %w", pane, &DeadError{Pane: pane, Status: info.DeadStatus})
	}
	return nil
}
