// --permissions: the agent's mode, and for ask the CLI's asking mode by
// the version installed where the task runs.

package runner

import (
	"context"
	"errors"
	"slices"

	"github.com/runner-cli/runner/runner/doctor"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/remote"
)

// askMode adds the plan's agent's asking mode to argv, a launch argv resolved for the
// task's site (argv[0] the CLI there) whose last nExtra elements are the
// --agent-arg ones (which stay last, so the user's own flags win): the
// version is read there when the mode depends on it. It returns the argv
// and the variables the mode adds to the pane's environment.
func askMode(ctx context.Context, env *Env, p *plan.Plan, argv []string, nExtra int) ([]string, []string, error) {
	prof := p.Profile
	var version string
	if prof.AskNeedsVersion() && p.Pool != "" {
		return nil, nil, fault.Usagef("--permissions ask: agent %s's asking mode depends on its version, not read in a pool yet (give --host NAME, or another --permissions)", prof.Name)
	}
	if prof.AskNeedsVersion() {
		v, err := cliVersion(ctx, env, prof, p.Host, argv[0])
		if err != nil {
			return nil, nil, fault.Usagef("agent %s: --permissions ask depends on its version, which could not be read: %v (use --permissions default or auto)", prof.Name, err)
		}
		version = v
	}
	m, err := prof.AskModeFor(version)
	if err != nil {
		return nil, nil, err
	}
	at := len(argv) - nExtra
	out := slices.Concat(argv[:at], m.Args, argv[at:])
	return out, m.EnvList(), nil
}

// cliVersion reads the version of the CLI at path: here, or on host.
func cliVersion(ctx context.Context, env *Env, prof *profile.Profile, host, path string) (string, error) {
	if len(prof.VersionArgs) == 0 {
		return "", errors.New("the profile has no version_args")
	}
	if host == "" {
		return doctor.CachedVersion(ctx, "", path, prof.VersionArgs)
	}
	c, err := env.HostConn(ctx, host)
	if err != nil {
		return "", err
	}
	return remote.CLIVersion(ctx, c, path, prof.VersionArgs)
}
