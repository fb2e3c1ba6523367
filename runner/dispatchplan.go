// What a dispatch resolves before it records its task, on this Env (the
// state, the hosts, git): the plan of package plan made whole, and the
// checks that make bad input a usage error before anything is written.

package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/confine"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

// siteArgv is the agent's argv on the site the plan runs it on: argv[0]
// found here (ResolveArgv), or checked on the host with its directory
// (remote.Argv); and, with --permissions ask, its asking mode (askMode).
func siteArgv(ctx context.Context, env *Env, p *plan.Plan) (argv, askEnv []string, err error) {
	argv = p.Argv
	switch {
	case p.Pool != "": // checked on the host it is placed on
	case p.Host == "":
		argv, err = ResolveArgv(env, p.Profile, argv)
	default:
		var c *hosts.Conn
		if c, err = env.HostConn(ctx, p.Host); err == nil {
			argv, err = remote.Argv(ctx, c, p.Profile, p.Dir, argv)
		}
	}
	if err != nil || p.Mode != profile.PermissionsAsk {
		return argv, nil, err
	}
	return askMode(ctx, env, p, argv, len(p.Req.AgentArgs))
}

// planDispatch makes req one plan (package plan): made from the state
// (plan.Make: the agent, the project and its policy, the lineage, --after,
// --from, the budgets), a door's child confined, the worktree, the
// sandbox and --require-snapshot checked where the task runs, and the
// agent's command line made for its site. Every error is found before
// anything is recorded.
func planDispatch(ctx context.Context, env *Env, req DispatchRequest) (*plan.Plan, error) {
	st, err := env.Store.Read(ctx)
	if err != nil {
		return nil, err
	}
	p, err := plan.Make(req, env.Profiles, st, CallerTask(ctx, env, st, nil))
	if err != nil {
		return nil, err
	}
	if req.Confined != "" {
		if err := confineDispatch(ctx, st, p); err != nil {
			return nil, err
		}
	}
	if err := checkPlace(ctx, env, p); err != nil {
		return nil, err
	}
	argv, askEnv, err := siteArgv(ctx, env, p)
	if err != nil {
		return nil, err
	}
	p.Finish(argv, askEnv)
	return p, nil
}

// checkPlace checks, where the task runs, what the plan needs there: a
// repository with a work tree for a worktree, a sandbox that can be made,
// a repository for --require-snapshot. Each missing is a usage error.
func checkPlace(ctx context.Context, env *Env, p *plan.Plan) error {
	if err := checkWorktree(ctx, env, p); err != nil {
		return err
	}
	if err := checkSandbox(ctx, env, p); err != nil {
		return err
	}
	if p.Sandbox && p.Host == "" {
		p.Checked = &settings.Checked{Within: p.Within, GitCommon: realCommonDir(ctx, p.Dir)}
	}
	if p.Req.RequireSnapshot && p.Host == "" {
		if _, err := gitsnap.List(ctx, p.Dir); err != nil && (errors.Is(err, gitsnap.ErrNotRepo) || errors.Is(err, gitsnap.ErrBareRepo) || errors.Is(err, gitsnap.ErrGitMissing)) {
			return fault.Usagef("--require-snapshot: %v", err)
		}
	}
	return nil
}

// checkWorktree refuses a worktree where there is no repository with a
// work tree: a usage error found before the task is recorded.
func checkWorktree(ctx context.Context, env *Env, p *plan.Plan) error {
	if !p.Worktree || p.Pool != "" {
		return nil
	}
	gctx, err := env.GitOn(ctx, p.Host)
	if err != nil {
		return err
	}
	if _, err := gitsnap.WorktreeHome(gctx, p.Dir); err != nil {
		if errors.Is(err, gitsnap.ErrNotRepo) || errors.Is(err, gitsnap.ErrBareRepo) || errors.Is(err, gitsnap.ErrGitMissing) {
			return fault.Usagef("--worktree: %v (a worktree task needs a git repository with a work tree: run without --worktree, or 'git init' there)", err)
		}
		return fmt.Errorf("a worktree of %s: %w", p.Dir, err)
	}
	return nil
}

// checkSandbox checks, for a sandboxed task, that a sandbox can be made
// where it runs: one that cannot is a usage error (exit 2) found before
// anything is recorded, not a failed task.
func checkSandbox(ctx context.Context, env *Env, p *plan.Plan) error {
	if !p.Sandbox {
		return nil
	}
	if err := p.CheckSandboxHome(); err != nil {
		return err
	}
	if p.Host != "" || p.Pool != "" {
		if p.Pool != "" {
			return nil // checked on the host it is placed on
		}
		c, err := env.HostConn(ctx, p.Host)
		if err != nil {
			return err
		}
		_, err = c.Sandbox(ctx)
		return err
	}
	if _, err := sandbox.CheckLocal(ctx); err != nil {
		return fault.Usagef("--sandbox: %v", err)
	}
	if p.SandboxHome == settings.SandboxHomeTask && sandbox.LocalProgram == sandbox.SeatbeltProgram {
		return fault.Usagef("--sandbox-home task: %v", sandbox.ErrSeatbeltBinds)
	}
	return nil
}

// confineDispatch holds a dispatch asked through a sandboxed task's door to that
// task (plan.Confine): on this machine, in its folder or below (as the
// folders really are: a link the agent made does not lead out), in its
// repository (a .git file there names the parent's git directory or one
// inside its folder, never another repository's), sandboxed.
func confineDispatch(ctx context.Context, st *state.State, p *plan.Plan) error {
	parent := st.Task(p.Req.Confined)
	if parent == nil {
		return fault.Usagef("the sandboxed task %s that asks is not in the state", p.Req.Confined)
	}
	if p.Host != "" || p.Pool != "" || parent.Tmux.Host != "" {
		return fault.Usagef("a sandboxed task dispatches only on this machine")
	}
	dir := p.Dir
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fault.Usagef("a sandboxed task's child folder %s: %v", dir, err)
	}
	within := confine.Real(parent.Dir)
	if !sandbox.Within(real, within) {
		return fault.Usagef("a sandboxed task dispatches only into its own folder %s, not %s", parent.Dir, dir)
	}
	if common := realCommonDir(ctx, real); common != "" && common != realCommonDir(ctx, parent.Dir) && !sandbox.Within(common, within) {
		return fault.Usagef("a sandboxed task dispatches only into its own repository: the git directory of %s is %s, neither its own nor inside its folder %s", dir, common, parent.Dir)
	}
	p.Confine(real, within, len(parent.HomeCopies) > 0)
	return nil
}

// realCommonDir is the common git directory of the repository dir is in,
// resolved ("" when it is in none).
func realCommonDir(ctx context.Context, dir string) string {
	c, err := gitsnap.CommonDir(ctx, dir)
	if err != nil {
		return ""
	}
	return confine.Real(c)
}
