package group

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/state"
)

// boundThereScript runs "$@" bounded by timeout(1) for $1 seconds (then
// SIGKILL 3 s later) when the host has it, else as it is.
const boundThereScript = `t=$1; shift
if command -v timeout >/dev/null 2>&1; then exec timeout -k 3 "$t" "$@"; fi
exec "$@"`

// exitTimedOut is timeout(1)'s exit code for a command it ended.
const exitTimedOut = 124

// RunCheckThere is RunCheck for a candidate on a host: command runs in
// dir there, through via (a session of the host's shared connection),
// the folder and the command line reaching the shell there as values of
// a constant script (the transport quotes every word). A check past
// timeout is ended there by timeout(1) when the host has it (its whole
// process group: TERM, KILL 3 s later), and its ssh session here a few
// seconds after (ending the session alone would leave the check running
// there); the exit code is the command's there
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
	secs := strconv.Itoa(int((timeout + time.Second - 1) / time.Second))
	argv = append([]string{"sh", "-c", boundThereScript, "runner-check-bound", secs}, argv...)
	cctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	cmd := via.Command(cctx, argv...)
	out := &textutil.TailWriter{Max: CheckTail}
	cmd.Stdout, cmd.Stderr = out, out
	start := clock.Now()
	err := cmd.Run()
	res.Duration = clock.Since(start)
	res.Tail = strings.TrimRight(out.String(), "\n")
	var ee *exec.ExitError
	switch {
	case cctx.Err() != nil && ctx.Err() == nil,
		errors.As(err, &ee) && ee.ExitCode() == exitTimedOut && res.Duration >= timeout:
		res.TimedOut = true
		res.Tail = strings.TrimSpace(res.Tail + "\n(runner: the check ran past " + timeout.String() + " and was ended there)")
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
