package door

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/tmuxctl"
)

// Limit is how many requests of one task a door runs at once.
const Limit = 4

// Open serves the door in dir (made 0700 if missing; the agent's
// read-only) with h while ctx lasts: the socket is made anew (a stale one
// of an earlier supervisor removed) and goes with the door.
func Open(ctx context.Context, dir string, h Handler) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(dir, SocketName)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the old socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	Serve(ctx, ln, Limit, h)
	return nil
}

// ServeTask serves a task's door in dir while ctx lasts (Open), its
// requests run by r, after forward (a task on a host: its socket there;
// nil: none). What fails is said through warn: the task runs on, its
// agent's runner commands then fail with what happened. Without a runner
// binary (r.Exe "") there is no door.
func ServeTask(ctx context.Context, dir string, r Runner, forward func(context.Context) error, warn func(string, ...any)) {
	if r.Exe == "" {
		return
	}
	if forward != nil {
		if err := forward(ctx); err != nil {
			warn("door of %s: forwarding it to its host: %v", r.TaskID, err)
		}
	}
	if err := Open(ctx, dir, r.Handle); err != nil {
		warn("door of %s: %v", r.TaskID, err)
	}
}

// Runner runs one request of a task's agent: runner itself (Exe) with
// the request's arguments and input, in the task's folder (or the
// caller's folder when it lies inside), with Environ (the supervisor's,
// which is the user's) and the task's identity: RUNNER_TASK_ID and
// RUNNER_CONFINED. What runner refuses a confined caller, it refuses
// there (cmd/runner).
type Runner struct {
	Exe      string
	TaskID   string
	Dir      string // the task's folder
	StateDir string // runner's state directory (RUNNER_STATE_DIR)
	Socket   string // runner's tmux server (RUNNER_TMUX_SOCKET)
	Environ  []string
	// Away says the task's folder is on another machine (a task on a
	// host): runner then runs in StateDir, and the caller's folder is not
	// looked for here.
	Away bool
}

// Handle is the Handler of r.
func (r Runner) Handle(ctx context.Context, req Request) Response {
	cmd := subproc.Group(ctx, r.Exe, req.Args...)
	cmd.Dir = r.Dir
	if r.Away {
		cmd.Dir = r.StateDir
	} else if req.Cwd != "" && filepath.IsAbs(req.Cwd) && sandbox.Within(filepath.Clean(req.Cwd), r.Dir) {
		if fi, err := os.Stat(req.Cwd); err == nil && fi.IsDir() {
			cmd.Dir = filepath.Clean(req.Cwd)
		}
	}
	cmd.Env = tmuxctl.ChildEnv(r.Environ, "RUNNER_TASK_ID="+r.TaskID, EnvConfined+"="+r.TaskID, EnvConfinedDir+"="+r.Dir,
		"RUNNER_STATE_DIR="+r.StateDir, "RUNNER_TMUX_SOCKET="+r.Socket)
	cmd.Stdin = bytes.NewReader(req.Stdin)
	out, errOut := &textutil.HeadWriter{Max: MaxMessage / 4}, &textutil.HeadWriter{Max: MaxMessage / 8}
	cmd.Stdout, cmd.Stderr = out, errOut
	err := cmd.Run()
	resp := Response{Stdout: out.Bytes(), Stderr: errOut.Bytes()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		resp.Code = ee.ExitCode()
	default:
		resp.Fault = FaultUnrun
		resp.Stderr = append(resp.Stderr, fmt.Sprintf("runner: the door could not run runner: %v\n", err)...)
	}
	return resp
}
