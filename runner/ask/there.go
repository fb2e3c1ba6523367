// A shadow of a task on a host runs there: in the task's folder there,
// the agent's CLI there, over the host's shared connection.

package ask

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Host is the host a target runs on, as its shadow there uses it. Argv
// checks, in one round trip, that dir is a folder there and argv's
// program is installed there, and returns the argv to run there ("runner"
// is the host's runner binary: remote.Argv); Command is argv run there,
// every word reaching the host's shell as a value (a session of the
// host's shared connection: transport.SSH.Command); Sandbox wraps the
// argv of a shadow of task t in a sandbox like t's agent's there
// (remote.SandboxArgv); String names it.
type Host interface {
	Argv(ctx context.Context, prof *profile.Profile, dir string, argv []string) ([]string, error)
	Command(ctx context.Context, argv ...string) *exec.Cmd
	Sandbox(ctx context.Context, t *state.Task, prof *profile.Profile, argv []string) ([]string, error)
	String() string
}

// shadowThereScript runs a shadow in its folder on a host ($1), bounded
// there by timeout(1) when the host has it ($2 seconds, then SIGKILL 3 s
// later): ending the ssh session alone would leave it running there.
const shadowThereScript = `cd -- "$1" || exit 126; t=$2; shift 2
if command -v timeout >/dev/null 2>&1; then exec timeout -k 3 "$t" "$@"; fi
exec "$@"`

// exitNoFolder and exitSSH are the exit codes of a shadow there whose
// folder is gone, and of ssh when the host did not answer.
const (
	exitNoFolder = 126
	exitTimeout  = 124
	exitSSH      = 255
)

// runShadowThere is runShadow for a target on a host (t.Tmux.Host): the
// profile's headless command with prompt, in t.Dir there, with
// RUNNER_SHADOW_OF and the profile's Env; bounded there by timeout and
// here by timeout and a few seconds. The shadow of a sandboxed task, or
// one asked by a sandboxed caller, runs in a sandbox there (Host.Sandbox),
// as one here does.
func runShadowThere(ctx context.Context, d Deps, t *state.Task, prof *profile.Profile, prompt string, timeout time.Duration) shadowResult {
	host := t.Tmux.Host
	if d.Hosts == nil {
		return shadowResult{err: fmt.Errorf("the shadow of %s would run on host %s, and this runner reaches no host (a bug in the caller)", t.ID, host)}
	}
	h, err := d.Hosts(ctx, host)
	if err != nil {
		return shadowResult{err: fmt.Errorf("the shadow of %s on host %s: %w", t.ID, host, err)}
	}
	argv, err := h.Argv(ctx, prof, t.Dir, prof.HeadlessArgv(prompt))
	if err != nil {
		return shadowResult{err: fmt.Errorf("the shadow of %s: %w", t.ID, err)}
	}
	if len(t.Sandbox) > 0 || d.Env.Getenv(door.EnvConfined) != "" {
		if argv, err = h.Sandbox(ctx, t, prof, argv); err != nil {
			return shadowResult{err: fmt.Errorf("the shadow of %s: its sandbox on host %s: %w", t.ID, host, err)}
		}
	}
	secs := strconv.Itoa(int((timeout + time.Second - 1) / time.Second))
	words := append([]string{"sh", "-c", shadowThereScript, "runner-shadow", t.Dir, secs, "env", "RUNNER_SHADOW_OF=" + t.ID}, prof.EnvList()...)
	tctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	cmd := h.Command(tctx, append(words, argv...)...)
	stdout := &textutil.HeadWriter{Max: askOutputMax}
	stderr := &textutil.TailWriter{Max: askStderrMax}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := clock.Now()
	err = cmd.Run()
	res := shadowResult{answer: strings.TrimSpace(tmuxctl.StripEscapes(stdout.String())), stderr: strings.TrimSpace(stderr.String())}
	var ee *exec.ExitError
	code := -1
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	switch {
	case err == nil:
		zero := 0
		res.exit = &zero
	case ctx.Err() != nil:
		res.err = fmt.Errorf("the shadow of %s on host %s was interrupted", t.ID, host)
	case tctx.Err() != nil || code == exitTimeout && clock.Since(start) >= timeout:
		res.timedOut = true
		res.err = fmt.Errorf("the shadow of %s on host %s gave no answer within %s (it was ended there)", t.ID, host, timeout)
	case code == exitSSH:
		res.err = fmt.Errorf("the shadow of %s: ssh to host %s (%s) failed%s", t.ID, host, h, stderrNote(res.stderr))
	case code == exitNoFolder:
		res.exit = &code
		res.err = fmt.Errorf("the shadow of %s: its folder %s is missing on host %s%s", t.ID, t.Dir, host, stderrNote(res.stderr))
	case code >= 0:
		res.exit = &code
		res.err = fmt.Errorf("the shadow of %s (%s on host %s) exited %d%s", t.ID, argv[0], host, code, stderrNote(res.stderr))
	default:
		res.err = fmt.Errorf("the shadow of %s (%s on host %s): %w%s", t.ID, argv[0], host, err, stderrNote(res.stderr))
	}
	return res
}
