package group

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/state"
)

// RunCheckThere is RunCheck for a candidate on a host: command runs in
// dir there, through via (a session of the host's shared connection),
// the folder and the command line reaching the shell there as values of
// a constant script (the transport quotes every word). A check past
// timeout ends its ssh session; the exit code is the command's there
// (255: ssh's own, the host did not answer, said in the tail). wrap, when
// not nil, wraps the argv run there (a sandboxed candidate's sandbox
// there), as RunCheck's does here.
func RunCheckThere(ctx context.Context, via transport.Transport, dir, command string, timeout time.Duration, wrap func([]string) ([]string, error)) state.CheckResult {
	res := state.CheckResult{Command: command, Exit: -1, Ran: clock.Now()}
	argv := []string{"sh", "-c", `cd -- "$1" || exit 126; eval "$2"`, "runner-check", dir, command}
	if wrap != nil {
		w, err := wrap(argv)
		if err != nil {
			res.Tail = "the check's sandbox on " + via.String() + ": " + err.Error()
			return res
		}
		argv = w
	}
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := via.Command(cctx, argv...)
	out := &tailBuffer{max: CheckTail}
	cmd.Stdout, cmd.Stderr = out, out
	start := clock.Now()
	err := cmd.Run()
	res.Duration = clock.Since(start)
	res.Tail = strings.TrimRight(out.String(), "\n")
	var ee *exec.ExitError
	switch {
	case cctx.Err() != nil && ctx.Err() == nil:
		res.TimedOut = true
		res.Tail = strings.TrimSpace(res.Tail + "\n(runner: the check ran past " + timeout.String() + " and its session was ended)")
	case err == nil:
		res.Exit = 0
	case errors.As(err, &ee) && ee.ExitCode() == 255:
		res.Tail = strings.TrimSpace(res.Tail + "\n(runner: ssh to " + via.String() + " failed: the host did not answer)")
	case errors.As(err, &ee) && ee.Exited():
		res.Exit = ee.ExitCode()
	default:
		res.Tail = strings.TrimSpace(res.Tail + "\n(runner: " + err.Error() + ")")
	}
	return res
}
