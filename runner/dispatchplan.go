// A dispatch's plan (package plan) made on this Env: the state read, the
// plan made from it, and checked on the machine where the task runs
// (machine: the plan's Machine on this Env).

package runner

import (
	"context"

	"github.com/runner-cli/runner/runner/doctor"
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/remote"
)

// planDispatch makes req one plan: made from the state (plan.Make: the
// agent, the project and its policy, the lineage, --after, --from, the
// budgets) and made whole where the task runs (Plan.Check: a door's child
// confined, the worktree, the sandbox, --require-snapshot, the agent's
// command line for its site). Every error is found before anything is
// recorded.
func planDispatch(ctx context.Context, env *Env, req DispatchRequest) (*plan.Plan, error) {
	st, err := env.Store.Read(ctx)
	if err != nil {
		return nil, err
	}
	p, err := plan.Make(req, env.Profiles, st, CallerTask(ctx, env, st, nil))
	if err != nil {
		return nil, err
	}
	if err := p.Check(ctx, machine{env}, st); err != nil {
		return nil, err
	}
	return p, nil
}

// machine is plan.Machine on env: this machine, and the hosts of its pool.
type machine struct{ env *Env }

var _ plan.Machine = machine{}

func (m machine) GitOn(ctx context.Context, host string) (context.Context, error) {
	return m.env.GitOn(ctx, host)
}

func (m machine) HostSandbox(ctx context.Context, host string) error {
	c, err := m.env.HostConn(ctx, host)
	if err != nil {
		return err
	}
	_, err = c.Sandbox(ctx)
	return err
}

func (m machine) Argv(ctx context.Context, host, dir string, prof *profile.Profile, argv []string) ([]string, error) {
	if host == "" {
		return ResolveArgv(m.env, prof, argv)
	}
	c, err := m.env.HostConn(ctx, host)
	if err != nil {
		return nil, err
	}
	return remote.Argv(ctx, c, prof, dir, argv)
}

func (m machine) CLIVersion(ctx context.Context, host, path string, args []string) (string, error) {
	if host == "" {
		return doctor.CachedVersion(ctx, "", path, args)
	}
	c, err := m.env.HostConn(ctx, host)
	if err != nil {
		return "", err
	}
	return remote.CLIVersion(ctx, c, path, args)
}
