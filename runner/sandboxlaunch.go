package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/confine"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

// sandbox wraps argv, the agent's command with its hook's arguments,
// in a bubblewrap sandbox (package sandbox) and returns what the agent may
// write: the task's folder (its worktree, or the project), the repository's
// git directory (commits, a worktree's index) but for what says what git
// runs (config, hooks, info, the worktree's .git file) and the other
// tasks' worktrees, and the agent CLI's own state directories under HOME
// (the profile's sandbox_paths, made when missing) and the user's (config
// sandbox_paths). Runner's state directory, the user's runtime directory
// and the tmux socket are out of reach; the task's events file, its hook
// files and its door (package door) are its openings. penv is the pane's
// environment (HOME, XDG_*, CODEX_HOME … for the profile's paths). The
// dispatch checked that the sandbox works (sandbox.CheckLocal); here its
// program is only found (one gone since is an error).
func (s localSite) sandbox(ctx context.Context, t *state.Task, prof *profile.Profile, penv, argv []string, sb *settings.Sandbox) ([]string, []string, error) {
	env := s.env
	prog, err := exec.LookPath(sandbox.LocalProgram)
	if err != nil {
		return nil, nil, exit.Usagef("--sandbox: %s is not installed any more (%s)", sandbox.LocalProgram, sandbox.LocalInstallHint)
	}
	home, _ := profile.EnvValue(penv, "HOME")
	common := ""
	if gctx, err := env.GitContext(ctx, t); err == nil {
		if c, err := gitsnap.CommonDir(gctx, t.Dir); err == nil {
			common = c
		}
	}
	cliDirs, made, err := sandboxDirs(prof.SandboxPaths, sb.Paths, home, penv)
	if err != nil {
		return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	var binds [][2]string
	if sb.Home == settings.SandboxHomeTask {
		if binds, err = homeBinds(ctx, env, t, home, cliDirs); err != nil {
			return nil, nil, err
		}
	} else {
		made = append(made, cliDirs...)
	}
	door := env.Store.TaskFile("door-dir", t.ID)
	if err := os.MkdirAll(door, 0o700); err != nil {
		return nil, nil, fmt.Errorf("task %s: its door: %w", t.ID, err)
	}
	spec := confine.SpecFor(confine.Place{Dir: t.Dir, GitCommon: common, Home: home, Getenv: env.Env,
		StateDir: env.Store.Dir(), Socket: env.TC.SocketPath(),
		Events: env.Store.TaskFile("events", t.ID), HookDir: env.Store.TaskFile("hook-dir", t.ID), DoorDir: door}, made)
	// What the agent reads that /tmp holds would vanish under the private
	// /tmp: its program, runner (its hook), the PATH, HOME (a test's),
	// each as it really is (an npm bin/ entry is a link into lib/).
	path, _ := profile.EnvValue(penv, "PATH")
	read := append([]string{filepath.Dir(argv[0]), argv[0], filepath.Dir(env.Exe), env.Exe, home}, filepath.SplitList(path)...)
	if p, err := exec.LookPath(argv[0]); err == nil {
		read = append(read, filepath.Dir(p), p)
	}
	spec.Readable = sandbox.Readable(read)
	spec.Binds = binds
	writable := spec.Writable
	for _, b := range binds {
		writable = append(writable, b[1]+" (the task's copy)")
	}
	wrapped, err := sandbox.WrapLocal(prog, spec, confine.Temp(t.ID), argv)
	if err != nil {
		return nil, nil, exit.Usagef("--sandbox: %v", err)
	}
	return wrapped, writable, nil
}

// sandboxDirs expands the profile's sandbox paths (the CLI's own state)
// and the user's (config sandbox_paths) for this HOME and environment,
// making the directories among them that are missing.
func sandboxDirs(cliPaths, userPaths []string, home string, penv []string) (cliDirs, userDirs []string, err error) {
	expand := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			if x := sandbox.Expand(p, home, penv); x != "" {
				out = append(out, x)
			}
		}
		return out
	}
	if cliDirs, err = sandbox.Prepare(expand(cliPaths)); err != nil {
		return nil, nil, err
	}
	userDirs, err = sandbox.Prepare(expand(userPaths))
	return cliDirs, userDirs, err
}

// homeBinds copies the CLI's directories for the task (recorded with it)
// and returns them bound over the real ones: nothing the agent writes
// there reaches the user's.
func homeBinds(ctx context.Context, env *Env, t *state.Task, home string, cliDirs []string) ([][2]string, error) {
	copies, err := confine.HomeCopies(env.Store.TaskFile("home-dir", t.ID), home, cliDirs)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	var binds [][2]string
	for _, p := range cliDirs {
		binds = append(binds, [2]string{copies[p], p})
	}
	if err := env.Record().Update(ctx, t.ID, func(x *state.Task) { x.HomeCopies = copies }); err != nil {
		return nil, err
	}
	return binds, nil
}

// ShadowSandbox wraps argv, the headless command of a shadow of task t
// (runner ask), in a sandbox: it reads what it likes, writes only the
// CLI's own state directories (the profile's sandbox_paths, which it
// needs), and sees nothing of runner's. A shadow of a sandboxed task runs
// so (its folder's agent files, hooks among them, are the agent's to
// write), and so does every shadow asked through a sandboxed task's door.
func ShadowSandbox(env *Env, t *state.Task, prof *profile.Profile, argv []string) ([]string, error) {
	prog, err := exec.LookPath(sandbox.LocalProgram)
	if err != nil {
		return nil, exit.Usagef("the shadow of sandboxed task %s runs sandboxed, and %s is not installed (%s)", t.ID, sandbox.LocalProgram, sandbox.LocalInstallHint)
	}
	environ := os.Environ
	if env.Environ != nil {
		environ = env.Environ
	}
	penv := environ()
	home := env.Env("HOME")
	var marked []string
	for _, p := range prof.SandboxPaths {
		if x := sandbox.Expand(p, home, penv); x != "" {
			marked = append(marked, x)
		}
	}
	made, err := sandbox.Prepare(marked)
	if err != nil {
		return nil, fmt.Errorf("shadow of %s: %w", t.ID, err)
	}
	var binds [][2]string
	if len(t.HomeCopies) > 0 {
		// The task's own copies of its CLI's directories (sandbox_home
		// "task"), not the user's.
		made = nil
		for p, c := range t.HomeCopies {
			binds = append(binds, [2]string{c, p})
		}
		slices.SortFunc(binds, func(a, b [2]string) int { return strings.Compare(a[1], b[1]) })
	}
	spec := confine.SpecFor(confine.Place{Home: home, Getenv: env.Env, StateDir: env.Store.Dir(), Socket: env.TC.SocketPath()}, made)
	spec.Binds = binds
	read := []string{filepath.Dir(argv[0]), argv[0], home, t.Dir}
	read = append(read, filepath.SplitList(env.Env("PATH"))...)
	spec.Readable = sandbox.Readable(read)
	wrapped, err := sandbox.WrapLocal(prog, spec, confine.Temp(t.ID), argv)
	if err != nil {
		return nil, exit.Usagef("the shadow of sandboxed task %s: %v", t.ID, err)
	}
	return wrapped, nil
}
