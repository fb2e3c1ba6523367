package runner

import (
	"context"
	"fmt"
	"os"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/confine"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

// sandbox wraps argv, the agent's command with its hook's arguments,
// in the task's sandbox (confine.Wrap) and returns what the agent may
// write: the task's folder (its worktree, or the project), the
// repository's git directory, the CLI's own state directories under HOME
// (the profile's sandbox_paths) and the user's (config sandbox_paths);
// the task's events file, its hook files and its door (package door) are
// its openings. penv is the pane's environment (HOME, XDG_*, CODEX_HOME …
// for the profile's paths). The dispatch checked that the sandbox works
// (sandbox.CheckLocal); here its program is only found (one gone since is
// an error).
func (s localSite) sandbox(ctx context.Context, t *state.Task, prof *profile.Profile, penv, argv []string, sb *settings.Sandbox) ([]string, []string, error) {
	env := s.env
	home, _ := profile.EnvValue(penv, "HOME")
	path, _ := profile.EnvValue(penv, "PATH")
	common := ""
	if gctx, err := env.GitContext(ctx, t); err == nil {
		if c, err := gitsnap.CommonDir(gctx, t.Dir); err == nil {
			common = confine.Real(c)
		}
	}
	if c := sb.Checked; c != nil {
		// as the dispatch checked it, again at every start (a record of
		// a runner before it has none)
		if err := confine.CheckPlace(t.Dir, common, c.Within, c.GitCommon); err != nil {
			return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	l := confine.Launch{
		Place: confine.Place{Dir: t.Dir, GitCommon: common, Home: home, Getenv: GetenvOf(env),
			StateDir: env.Store.Dir(), Socket: env.TC.SocketPath(), Events: env.Store.TaskFile(state.FileEvents, t.ID),
			HookDir: env.Store.TaskFile(state.FileHookDir, t.ID), DoorDir: env.Store.TaskFile(state.FileDoorDir, t.ID)},
		ID: t.ID, Exe: env.Exe, Env: penv, Path: path, Argv: argv, CLIPaths: prof.SandboxPaths, UserPaths: sb.Paths,
		Verify: sb.Checked != nil && sb.Checked.Within != "",
	}
	if sb.Home == settings.SandboxHomeTask {
		l.CopiesDir = env.Store.TaskFile(state.FileHomeDir, t.ID)
		l.SaveCopies = func(copies map[string]string) error {
			return env.Record().Update(ctx, t.ID, func(x *state.Task) { x.HomeCopies = copies })
		}
	}
	return confine.Wrap(l)
}

// CheckSandbox wraps argv, a group's check to run in sandboxed candidate
// t's folder, in a sandbox like its agent's: it writes the folder and the
// repository's git directory, reads the rest, sees nothing of runner's.
func CheckSandbox(ctx context.Context, env *Env, t *state.Task, argv []string) ([]string, error) {
	sh := shadowOf(env, t, argv)
	sh.WriteDir = true
	if c, err := gitsnap.CommonDir(ctx, t.Dir); err == nil {
		sh.GitCommon = c
	}
	return confine.WrapShadow(sh)
}

// ShadowSandbox wraps argv, the headless command of a shadow of task t
// (runner ask), in a sandbox (confine.WrapShadow). A shadow of a
// sandboxed task runs so (its folder's agent files, hooks among them, are
// the agent's to write), and so does every shadow asked through a
// sandboxed task's door.
func ShadowSandbox(env *Env, t *state.Task, prof *profile.Profile, argv []string) ([]string, error) {
	sh := shadowOf(env, t, argv)
	sh.CLIPaths = prof.SandboxPaths
	return confine.WrapShadow(sh)
}

// shadowOf is the sandbox of a command run for task t beside its agent.
func shadowOf(env *Env, t *state.Task, argv []string) confine.Shadow {
	environ := os.Environ
	if env.Environ != nil {
		environ = env.Environ
	}
	return confine.Shadow{ID: t.ID, Dir: t.Dir, HomeCopies: t.HomeCopies, Home: GetenvOf(env)("HOME"),
		Getenv: GetenvOf(env), Env: environ(), StateDir: env.Store.Dir(), Socket: env.TC.SocketPath(), Argv: argv}
}
