package plan

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/confine"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

// Machine is what a plan asks of the machines a task may run on: this
// one, or a registered host (host "" is this machine). Package runner
// gives it on its Env; tests give a fake.
type Machine interface {
	// Caller is the task the dispatching process runs under, as st
	// knows it ("" for none: package caller).
	Caller(ctx context.Context, st *state.State) string
	// Pool checks that the pool of hosts spec (any, label:L) has hosts.
	Pool(ctx context.Context, spec string) error
	// GitOn is ctx for gitsnap calls on host (gitsnap.On).
	GitOn(ctx context.Context, host string) (context.Context, error)
	// HostSandbox checks that a sandbox can be made on host.
	HostSandbox(ctx context.Context, host string) error
	// Argv is argv with argv[0] found on host (here: made absolute; on a
	// host: checked there, in dir).
	Argv(ctx context.Context, host, dir string, prof *profile.Profile, argv []string) ([]string, error)
	// CLIVersion is what the CLI at path prints for args on host.
	CLIVersion(ctx context.Context, host, path string, args []string) (string, error)
}

// Check makes the plan whole where its task runs (m): its pool's hosts
// there, a door's child
// confined (st: the asking task's record), a worktree's repository, the
// sandbox and --require-snapshot checked, the agent's command line found
// for its site with its asking mode (Finish). Each missing is a usage
// error found before anything is recorded.
func (p *Plan) Check(ctx context.Context, m Machine, st *state.State) error {
	if p.Pool != "" {
		if err := m.Pool(ctx, p.Pool); err != nil {
			return err
		}
	}
	if p.Req.Confined != "" {
		if err := p.confineTo(ctx, st); err != nil {
			return err
		}
	}
	if err := p.checkWorktree(ctx, m); err != nil {
		return err
	}
	if err := p.checkSandbox(ctx, m); err != nil {
		return err
	}
	if p.Sandbox && p.Host == "" {
		p.Checked = &settings.Checked{Within: p.Within, GitCommon: realCommonDir(ctx, p.Dir)}
	}
	if p.Req.RequireSnapshot && p.Host == "" {
		if _, err := gitsnap.List(ctx, p.Dir); err != nil && noRepo(err) {
			return fault.Usagef("--require-snapshot: %v", err)
		}
	}
	argv, env, err := p.siteArgv(ctx, m)
	if err != nil {
		return err
	}
	p.Finish(argv, env)
	return nil
}

// noRepo reports whether err says there is no repository with a work tree
// to snapshot (or no git).
func noRepo(err error) bool {
	return errors.Is(err, gitsnap.ErrNotRepo) || errors.Is(err, gitsnap.ErrBareRepo) || errors.Is(err, gitsnap.ErrGitMissing)
}

// checkWorktree refuses a worktree where there is no repository with a
// work tree.
func (p *Plan) checkWorktree(ctx context.Context, m Machine) error {
	if !p.Worktree || p.Pool != "" {
		return nil
	}
	gctx, err := m.GitOn(ctx, p.Host)
	if err != nil {
		return err
	}
	if _, err := gitsnap.WorktreeHome(gctx, p.Dir); err != nil {
		if noRepo(err) {
			return fault.Usagef("--worktree: %v (a worktree task needs a git repository with a work tree: run without --worktree, or 'git init' there)", err)
		}
		return fmt.Errorf("a worktree of %s: %w", p.Dir, err)
	}
	return nil
}

// checkSandbox checks, for a sandboxed task, that a sandbox can be made
// where it runs: one that cannot is a usage error (exit 2), not a failed
// task.
func (p *Plan) checkSandbox(ctx context.Context, m Machine) error {
	if !p.Sandbox {
		return nil
	}
	if err := p.CheckSandboxHome(); err != nil {
		return err
	}
	switch {
	case p.Pool != "":
		return nil // checked on the host it is placed on
	case p.Host != "":
		return m.HostSandbox(ctx, p.Host)
	}
	if _, err := sandbox.CheckLocal(ctx); err != nil {
		return fault.Usagef("--sandbox: %v", err)
	}
	if p.SandboxHome == settings.SandboxHomeTask && sandbox.LocalProgram == sandbox.SeatbeltProgram {
		return fault.Usagef("--sandbox-home task: %v", sandbox.ErrSeatbeltBinds)
	}
	return nil
}

// siteArgv is the agent's argv on the plan's site (Machine.Argv; in a
// pool, checked on the host it is placed on) and, with --permissions ask,
// its asking mode (askMode).
func (p *Plan) siteArgv(ctx context.Context, m Machine) (argv, env []string, err error) {
	argv = p.Argv
	if p.Pool == "" {
		if argv, err = m.Argv(ctx, p.Host, p.Dir, p.Profile, argv); err != nil {
			return nil, nil, err
		}
	}
	if p.Mode != profile.PermissionsAsk {
		return argv, nil, nil
	}
	return p.askMode(ctx, m, argv, len(p.Req.AgentArgs))
}

// askMode adds the agent's asking mode to argv, a launch argv resolved for
// the task's site (argv[0] the CLI there) whose last nExtra elements are
// the --agent-arg ones (which stay last, so the user's own flags win): the
// version is read there when the mode depends on it. It returns the argv
// and the variables the mode adds to the pane's environment.
func (p *Plan) askMode(ctx context.Context, m Machine, argv []string, nExtra int) ([]string, []string, error) {
	prof := p.Profile
	var version string
	if prof.AskNeedsVersion() && p.Pool != "" {
		return nil, nil, fault.Usagef("--permissions ask: agent %s's asking mode depends on its version, not read in a pool yet (give --host NAME, or another --permissions)", prof.Name)
	}
	if prof.AskNeedsVersion() {
		v, err := cliVersion(ctx, m, prof, p.Host, argv[0])
		if err != nil {
			return nil, nil, fault.Usagef("agent %s: --permissions ask depends on its version, which could not be read: %v (use --permissions default or auto)", prof.Name, err)
		}
		version = v
	}
	mode, err := prof.AskModeFor(version)
	if err != nil {
		return nil, nil, err
	}
	at := len(argv) - nExtra
	return slices.Concat(argv[:at], mode.Args, argv[at:]), mode.EnvList(), nil
}

// cliVersion reads the version of the CLI at path, on host.
func cliVersion(ctx context.Context, m Machine, prof *profile.Profile, host, path string) (string, error) {
	if len(prof.VersionArgs) == 0 {
		return "", errors.New("the profile has no version_args")
	}
	return m.CLIVersion(ctx, host, path, prof.VersionArgs)
}

// confineTo holds a dispatch asked through a sandboxed task's door to that
// task (Confine): on this machine, in its folder or below (as the folders
// really are: a link the agent made does not lead out), in its repository
// (a .git file there names the parent's git directory or one inside its
// folder, never another repository's), sandboxed.
func (p *Plan) confineTo(ctx context.Context, st *state.State) error {
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

// realCommonDir is the common git directory of the repository dir (on
// this machine) is in, resolved ("" when it is in none).
func realCommonDir(ctx context.Context, dir string) string {
	c, err := gitsnap.CommonDir(ctx, dir)
	if err != nil {
		return ""
	}
	return confine.Real(c)
}
