// What a dispatch resolves before it records its task: the agent and its
// argv, the project and its place, the lineage, --after, --from, and the
// checks that make bad input a usage error before anything is written.

package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/confine"
	"github.com/runner-cli/runner/runner/deps"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

// siteArgv is the agent's argv on the site the plan runs it on: argv[0]
// found here (ResolveArgv), or checked on the host with its directory
// (remote.Argv).
func siteArgv(ctx context.Context, env *Env, prof *profile.Profile, plan dispatchPlan, argv []string) ([]string, error) {
	if plan.pool != "" {
		return argv, nil // checked on the host it is placed on
	}
	if plan.host == "" {
		return ResolveArgv(env, prof, argv)
	}
	c, err := env.HostConn(ctx, plan.host)
	if err != nil {
		return nil, err
	}
	return remote.Argv(ctx, c, prof, plan.dir, argv)
}

// dispatchPlan is what a dispatch resolved from the state before it
// records its task.
type dispatchPlan struct {
	project, dir string                // where it works
	host         string                // the host it works on ("" for here)
	pool         string                // the pool of hosts it waits to be placed in
	setup        *config.WorktreeSetup // the worktree set-up, for --worktree
	lin          lineage               // its parent and level
	after        []string              // the tasks it waits for (--after)
	from         string                // the task whose branch it starts from (--from)
	checked      *settings.Checked     // a sandboxed task's place as checked, for every start
}

// planDispatch resolves the project, lineage, --after and --from of req
// (a --from turns on req.Worktree) and checks --require-snapshot.
func planDispatch(ctx context.Context, env *Env, req *DispatchRequest) (dispatchPlan, error) {
	var p dispatchPlan
	st, err := env.Store.Read(ctx)
	if err != nil {
		return p, err
	}
	place, err := projects.Resolve(st, req.Project, req.Host)
	if err != nil {
		return p, err
	}
	p.project, p.dir, p.host, p.pool = place.Project, place.Dir, place.Host, place.Pool
	within := ""
	if req.Confined != "" {
		if p.dir, within, err = confineDispatch(ctx, st, req, place.Dir, place.Host); err != nil {
			return p, err
		}
	}
	p.setup = req.worktreePlan(p.project)
	req.budgetsFrom(req.policy(p.project))
	if p.lin, err = dispatchLineage(ctx, env, st, *req); err != nil {
		return p, err
	}
	if p.after, err = deps.Resolve(st, req.After); err != nil {
		return p, err
	}
	if p.from, err = resolveFrom(st, req.From, p.after); err != nil {
		return p, err
	}
	if p.from != "" {
		req.Worktree = true
	}
	if err := checkWorktree(ctx, env, req, p); err != nil {
		return p, err
	}
	if err := checkSandbox(ctx, env, req, p); err != nil {
		return p, err
	}
	if req.Sandbox && p.host == "" {
		p.checked = &settings.Checked{Within: within, GitCommon: realCommonDir(ctx, p.dir)}
	}
	if req.RequireSnapshot && p.host == "" {
		if _, err := gitsnap.List(ctx, p.dir); err != nil && (errors.Is(err, gitsnap.ErrNotRepo) || errors.Is(err, gitsnap.ErrBareRepo) || errors.Is(err, gitsnap.ErrGitMissing)) {
			return p, fault.Usagef("--require-snapshot: %v", err)
		}
	}
	return p, nil
}

// budgetsFrom takes the budgets the dispatch names none of from the
// project's policy.
func (req *DispatchRequest) budgetsFrom(pol config.Policy) {
	if req.Settings.MaxTurns == 0 {
		req.Settings.MaxTurns = pol.MaxTurns
	}
	if req.Settings.BudgetTokens == 0 {
		req.Settings.BudgetTokens = pol.BudgetTokens
	}
	if req.Settings.BudgetUSD == 0 {
		req.Settings.BudgetUSD = pol.BudgetUSD
	}
}

// checkWorktree refuses a worktree where there is no repository with a
// work tree: a usage error found before the task is recorded.
func checkWorktree(ctx context.Context, env *Env, req *DispatchRequest, p dispatchPlan) error {
	if !req.Worktree || p.pool != "" {
		return nil
	}
	gctx, err := env.GitOn(ctx, p.host)
	if err != nil {
		return err
	}
	if _, err := gitsnap.WorktreeHome(gctx, p.dir); err != nil {
		if errors.Is(err, gitsnap.ErrNotRepo) || errors.Is(err, gitsnap.ErrBareRepo) || errors.Is(err, gitsnap.ErrGitMissing) {
			return fault.Usagef("--worktree: %v (a worktree task needs a git repository with a work tree: run without --worktree, or 'git init' there)", err)
		}
		return fmt.Errorf("a worktree of %s: %w", p.dir, err)
	}
	return nil
}

// checkSandbox settles whether the task is sandboxed (the flag, else the
// project's policy) and, if so, that a sandbox can be made where it runs:
// one that cannot is a usage error (exit 2) found before anything is
// recorded, not a failed task.
func checkSandbox(ctx context.Context, env *Env, req *DispatchRequest, p dispatchPlan) error {
	if !req.SandboxSet {
		req.Sandbox = req.policy(p.project).Sandbox
	}
	if !settings.ValidSandboxHome(req.SandboxHome) {
		return fault.Usagef("--sandbox-home %q: give shared or task", req.SandboxHome)
	}
	if !req.Sandbox {
		return nil
	}
	if p.host != "" || p.pool != "" {
		if req.SandboxHome == settings.SandboxHomeTask {
			return fault.Usagef("--sandbox-home task: not on a host yet (run it here, or with the shared home there)")
		}
		if p.pool != "" {
			return nil // checked on the host it is placed on
		}
		c, err := env.HostConn(ctx, p.host)
		if err != nil {
			return err
		}
		_, err = c.Sandbox(ctx)
		return err
	}
	if _, err := sandbox.CheckLocal(ctx); err != nil {
		return fault.Usagef("--sandbox: %v", err)
	}
	if req.SandboxHome == settings.SandboxHomeTask && sandbox.LocalProgram == sandbox.SeatbeltProgram {
		return fault.Usagef("--sandbox-home task: %v", sandbox.ErrSeatbeltBinds)
	}
	return nil
}

// worktreePlan settles whether the task gets a worktree of its own (the
// flag, else the config's isolation for the project or "*") and returns the
// project's worktree set-up.
func (req *DispatchRequest) worktreePlan(project string) *config.WorktreeSetup {
	pol := req.policy(project)
	if !req.WorktreeSet {
		req.Worktree = pol.Isolation == "worktree"
	}
	return pol.Setup
}

// policy is the config's policy for project (none without a Policy).
func (req *DispatchRequest) policy(project string) config.Policy {
	if req.Policy == nil {
		return config.Policy{}
	}
	return req.Policy(project)
}

// prepareAgent checks a dispatch's text, agent and options before anything
// is recorded, and returns the agent's profile, its command line (without
// the asking mode, which needs the site: see askMode) and the
// --permissions mode it runs in.
func prepareAgent(env *Env, req DispatchRequest) (*profile.Profile, []string, string, error) {
	if strings.TrimSpace(req.Text) == "" {
		return nil, nil, "", fault.Usagef("the task is empty: give TASK, or --file F / --file - with the text")
	}
	prof, err := profile.FindProfile(env.Profiles, req.Agent)
	if err != nil {
		return nil, nil, "", fault.Usagef("%v", err)
	}
	if err := prof.CheckTaskSize(req.Text); err != nil {
		return nil, nil, "", err
	}
	mode, err := profile.Permissions(prof, req.Permissions, req.PermissionsDefault)
	if err != nil {
		return nil, nil, "", err
	}
	argv, err := prof.Argv(profile.LaunchOptions{Model: req.Model, Permissions: mode, ExtraArgs: req.AgentArgs})
	if err != nil {
		return nil, nil, "", err
	}
	if _, err := config.CompileApproveRules("--approve-rule", req.Settings.ApproveRules); err != nil {
		return nil, nil, "", fault.Usagef("%v", err)
	}
	return prof, argv, mode, nil
}

// confineDispatch holds a dispatch asked through a sandboxed task's door to that
// task: on this machine, in its folder or below (as the folders really
// are: a link the agent made does not lead out), in its repository (a
// .git file there names the parent's git directory or one inside its
// folder, never another repository's), sandboxed. It returns the folder
// resolved, to be recorded so (no link left in it to swap after this
// check), and the parent's folder resolved, which every start of the
// child checks the folder against again (confine.CheckPlace).
func confineDispatch(ctx context.Context, st *state.State, req *DispatchRequest, dir, host string) (real, within string, err error) {
	parent := st.Task(req.Confined)
	if parent == nil {
		return "", "", fault.Usagef("the sandboxed task %s that asks is not in the state", req.Confined)
	}
	if host != "" || parent.Tmux.Host != "" {
		return "", "", fault.Usagef("a sandboxed task dispatches only on this machine")
	}
	real, err = filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "", fault.Usagef("a sandboxed task's child folder %s: %v", dir, err)
	}
	within = confine.Real(parent.Dir)
	if !sandbox.Within(real, within) {
		return "", "", fault.Usagef("a sandboxed task dispatches only into its own folder %s, not %s", parent.Dir, dir)
	}
	if common := realCommonDir(ctx, real); common != "" && common != realCommonDir(ctx, parent.Dir) && !sandbox.Within(common, within) {
		return "", "", fault.Usagef("a sandboxed task dispatches only into its own repository: the git directory of %s is %s, neither its own nor inside its folder %s", dir, common, parent.Dir)
	}
	req.Sandbox, req.SandboxSet = true, true
	if len(parent.HomeCopies) > 0 {
		req.SandboxHome = settings.SandboxHomeTask // no weaker than its parent's
	}
	return real, within, nil
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
