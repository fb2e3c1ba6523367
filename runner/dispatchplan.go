// A dispatch's plan (package plan) made on this Env: the state read, the
// plan made from it, and checked on the machine where the task runs
// (machine: the plan's Machine on this Env).

package runner

import (
	"context"

	"github.com/runner-cli/runner/runner/doctor"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/state"
)

// planDispatch makes req one plan (plan.Make) from the state as read now,
// on this machine and the hosts of env (machine). Every error is found
// before anything is recorded.
func planDispatch(ctx context.Context, env *Env, req DispatchRequest) (*plan.Plan, error) {
	st, err := req.ReadState(ctx, env.Store)
	if err != nil {
		return nil, err
	}
	return plan.Make(ctx, req, env.Profiles, st, machine{env})
}

// machine is plan.Machine on env: this machine, and the hosts of its pool.
type machine struct{ env *Env }

var _ plan.Machine = machine{}

func (m machine) Caller(ctx context.Context, st *state.State) string {
	return CallerTask(ctx, m.env, st, nil)
}

func (m machine) Pool(ctx context.Context, spec string) error {
	all, err := m.env.Store.Hosts(ctx)
	if err != nil {
		return err
	}
	_, err = hosts.Members(all, spec)
	return err
}

func (m machine) GitOn(ctx context.Context, host string) (context.Context, error) {
	return m.env.Hosts.GitOn(ctx, host)
}

func (m machine) HostSandbox(ctx context.Context, host string) error {
	c, err := m.env.Hosts.Conn(ctx, host)
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
	c, err := m.env.Hosts.Conn(ctx, host)
	if err != nil {
		return nil, err
	}
	return remote.Argv(ctx, c, prof, dir, argv)
}

func (m machine) CLIVersion(ctx context.Context, host, path string, args []string) (string, error) {
	if host == "" {
		return doctor.CachedVersion(ctx, "", path, args)
	}
	c, err := m.env.Hosts.Conn(ctx, host)
	if err != nil {
		return "", err
	}
	return remote.CLIVersion(ctx, c, path, args)
}
