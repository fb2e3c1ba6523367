package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// doorLimit is how many requests of one task the door runs at once.
const doorLimit = 4

// DoorPath is where a sandboxed task's door socket is (package door).
func (env *Env) DoorPath(id string) string {
	return filepath.Join(env.Store.TaskFile("door-dir", id), door.SocketName)
}

// serveDoor serves task t's door while ctx lasts: its agent's requests
// (runner msg, status, a child dispatch …) run as runner here, confined to
// t (door.EnvConfined), in t's folder. The socket is made anew (a stale
// one of an earlier supervisor removed); its folder, 0700, is the agent's
// read-only. A door that cannot be opened is logged: the task runs on,
// its agent's runner commands then fail with what happened.
func serveDoor(ctx context.Context, env *Env, t *state.Task) {
	if env.Exe == "" {
		return
	}
	dir := env.Store.TaskFile("door-dir", t.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		env.Warn("door of %s: %v", t.ID, err)
		return
	}
	path := filepath.Join(dir, door.SocketName)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		env.Warn("door of %s: remove the old socket: %v", t.ID, err)
		return
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		env.Warn("door of %s: %v", t.ID, err)
		return
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	door.Serve(ctx, ln, doorLimit, doorHandler(env, t))
}

// doorHandler runs one request of t's agent: runner itself with the
// request's arguments and input, in t's folder (or the caller's folder
// when it lies inside), with the environment of this supervisor, which is
// the user's, and t's identity: RUNNER_TASK_ID and RUNNER_CONFINED. What
// runner refuses a confined caller, it refuses there (cmd/runner).
func doorHandler(env *Env, t *state.Task) door.Handler {
	return func(ctx context.Context, req door.Request) door.Response {
		cmd := exec.CommandContext(ctx, env.Exe, req.Args...)
		cmd.Dir = t.Dir
		if req.Cwd != "" && filepath.IsAbs(req.Cwd) && sandbox.Within(filepath.Clean(req.Cwd), t.Dir) {
			if fi, err := os.Stat(req.Cwd); err == nil && fi.IsDir() {
				cmd.Dir = filepath.Clean(req.Cwd)
			}
		}
		environ := os.Environ
		if env.Environ != nil {
			environ = env.Environ
		}
		cmd.Env = tmuxctl.ChildEnv(environ(), "RUNNER_TASK_ID="+t.ID, door.EnvConfined+"="+t.ID,
			"RUNNER_STATE_DIR="+env.Store.Dir(), "RUNNER_TMUX_SOCKET="+env.TC.Socket())
		cmd.Stdin = bytes.NewReader(req.Stdin)
		out, errOut := &textutil.HeadWriter{Max: door.MaxMessage / 4}, &textutil.HeadWriter{Max: door.MaxMessage / 8}
		cmd.Stdout, cmd.Stderr = out, errOut
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
		cmd.WaitDelay = 5 * time.Second
		err := cmd.Run()
		resp := door.Response{Stdout: out.Bytes(), Stderr: errOut.Bytes()}
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee) && ee.ExitCode() >= 0:
			resp.Code = ee.ExitCode()
		default:
			resp.Code = 1
			resp.Stderr = append(resp.Stderr, fmt.Sprintf("runner: the door could not run runner: %v\n", err)...)
		}
		return resp
	}
}
