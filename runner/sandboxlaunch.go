package runner

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/state"
)

// sandbox wraps argv, the agent's command with its hook's arguments,
// in a bubblewrap sandbox (package sandbox) and returns what the agent may
// write: the task's folder (its worktree, or the project), the repository's
// git directory (commits, a worktree's index), runner's state directory
// (hooks, runner msg, child dispatches), the tmux server's socket, the
// agent CLI's own state directories under HOME (the
// profile's sandbox_paths, made when missing) and the user's (config
// sandbox_paths). penv is the pane's environment (HOME, XDG_*, CODEX_HOME
// … for the profile's paths). The dispatch checked that bwrap works
// (sandbox.Check); here it is only found (a bwrap gone since is an error).
func (s localSite) sandbox(ctx context.Context, t *state.Task, prof *profile.Profile, penv, argv, extra []string) ([]string, []string, error) {
	env := s.env
	bwrap, err := exec.LookPath(sandbox.Program)
	if err != nil {
		return nil, nil, exit.Usagef("--sandbox: %s is not installed any more (%s)", sandbox.Program, sandbox.InstallHint)
	}
	home := ""
	for _, kv := range penv {
		if v, ok := cutEnv(kv, "HOME"); ok {
			home = v
		}
	}
	// The tmux socket itself, not its directory: a socket given as a path
	// may sit in a directory with anything else.
	paths := []string{t.Dir, env.Store.Dir(), env.TC.SocketPath()}
	if gctx, err := env.GitContext(ctx, t); err == nil {
		if common, err := gitsnap.CommonDir(gctx, t.Dir); err == nil {
			paths = append(paths, common)
		}
	}
	var marked []string
	for _, p := range append(append([]string(nil), prof.SandboxPaths...), extra...) {
		if x := sandbox.Expand(p, home, penv); x != "" {
			marked = append(marked, x)
		}
	}
	made, err := sandbox.Prepare(marked)
	if err != nil {
		return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	w := sandbox.Writable(append(paths, made...))
	// What the agent reads that /tmp holds would vanish under the private
	// /tmp: its program, runner (its hook), the PATH, HOME (a test's).
	read := []string{filepath.Dir(argv[0]), filepath.Dir(env.Exe), home}
	for _, kv := range penv {
		if v, ok := cutEnv(kv, "PATH"); ok {
			read = append(read, filepath.SplitList(v)...)
		}
	}
	return sandbox.Argv(bwrap, sandbox.UnderTmp(read), w, argv), w, nil
}

// cutEnv returns the value of kv if it is key's entry (KEY=VALUE).
func cutEnv(kv, key string) (string, bool) {
	if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
		return kv[len(key)+1:], true
	}
	return "", false
}
