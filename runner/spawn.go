package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/tmuxctl"
)

// SpawnRunner starts this runner binary with args (after --socket) as a
// process of its own: a new session (it outlives the caller's terminal),
// stdin from /dev/null, its output appended to logPath (0600), the caller's
// environment without the task identity variables (a process started from
// a task's pane must not pass for that task) and with RUNNER_STATE_DIR set,
// extra open files handed over. It returns the pid, released. The one
// self-spawn: detached supervisors and the background gc.
func (env *Env) SpawnRunner(logPath string, extra []*os.File, args ...string) (int, error) {
	if env.Exe == "" {
		return 0, errors.New("cannot find the runner binary to start it again")
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return 0, err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("open the log %s: %w", logPath, err)
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	cmd := subproc.Detached(env.Exe, append([]string{"--socket", env.TC.Socket()}, args...)...)
	cmd.Env = tmuxctl.ChildEnv(os.Environ(), "RUNNER_STATE_DIR="+env.Store.Dir())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.ExtraFiles = extra
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	return pid, nil
}
