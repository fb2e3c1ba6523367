package group

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/state"
)

// CheckTail bounds what is kept of a check's output (its end).
const CheckTail = 4 << 10

// DefaultCheckTimeout bounds a check when the group gives no
// --check-timeout.
const DefaultCheckTimeout = 10 * time.Minute

// RunCheck runs command (a shell command line, the user's: `sh -c`) in
// dir, its argv first given to wrap when set (a sandbox), and returns
// what came of it: the exit code (-1 when it did not exit by itself: it
// could not start, or ran past timeout and its process group was killed),
// how long it took and the tail of its output (stdout and stderr).
func RunCheck(ctx context.Context, dir, command string, timeout time.Duration, wrap func([]string) ([]string, error)) state.CheckResult {
	res := state.CheckResult{Command: command, Exit: -1, Ran: clock.Now()}
	// The user's command line reaches the shell as a value ("$1"), run
	// by a constant script.
	argv := []string{"sh", "-c", `eval "$1"`, "runner-check", command}
	if wrap != nil {
		w, err := wrap(argv)
		if err != nil {
			res.Tail = "the check's sandbox: " + err.Error()
			return res
		}
		argv = w
	}
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := subproc.Group(cctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	out := &textutil.TailWriter{Max: CheckTail}
	cmd.Stdout, cmd.Stderr = out, out
	start := clock.Now()
	err := cmd.Run()
	res.Duration = clock.Since(start)
	res.Tail = strings.TrimRight(out.String(), "\n")
	var ee *exec.ExitError
	switch {
	case cctx.Err() != nil && ctx.Err() == nil:
		res.TimedOut = true
		res.Tail = strings.TrimSpace(res.Tail + "\n(runner: the check ran past " + timeout.String() + " and was killed)")
	case err == nil:
		res.Exit = 0
	case errors.As(err, &ee) && ee.Exited():
		res.Exit = ee.ExitCode()
	default:
		res.Tail = strings.TrimSpace(res.Tail + "\n(runner: " + err.Error() + ")")
	}
	return res
}
