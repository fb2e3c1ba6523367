// --permissions: the agent's mode, and for ask the CLI's asking mode by
// the version installed where the task runs.

package runner

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/runner-cli/runner/runner/doctor"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
)

// permissionsMode is the --permissions mode a dispatch of prof runs in:
// the flag's (mode), else the config's (fallback), else runner's default
// (profile.DefaultPermissions). Without the flag, ask falls back to the
// CLI's own default for a profile without an asking mode (pi, the
// shell); the flag's ask of such a profile is refused (exit 2).
func permissionsMode(prof *profile.Profile, mode, fallback string) (string, error) {
	if mode == "" {
		mode = cmp.Or(fallback, profile.DefaultPermissions)
		if mode == profile.PermissionsAsk && len(prof.PermissionsAsk) == 0 {
			return profile.PermissionsDefault, nil
		}
		return mode, nil
	}
	if err := profile.CheckPermissions("--permissions", mode); err != nil {
		return "", err
	}
	if mode == profile.PermissionsAsk && len(prof.PermissionsAsk) == 0 {
		_, err := prof.AskModeFor("")
		return "", err
	}
	return mode, nil
}

// askMode adds prof's asking mode to argv, a launch argv resolved for the
// task's site (argv[0] the CLI there) whose last nExtra elements are the
// --agent-arg ones (which stay last, so the user's own flags win): the
// version is read there when the mode depends on it. It returns the argv
// and the variables the mode adds to the pane's environment.
func askMode(ctx context.Context, env *Env, prof *profile.Profile, plan dispatchPlan, argv []string, nExtra int) ([]string, []string, error) {
	var version string
	if prof.AskNeedsVersion() {
		v, err := cliVersion(ctx, env, prof, plan.host, argv[0])
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
	ctx, cancel := context.WithTimeout(ctx, 2*doctor.VersionTimeout)
	defer cancel()
	out, err := c.Run(ctx, append([]string{path}, prof.VersionArgs...)...)
	if err != nil {
		return "", err // names the host
	}
	return doctor.ParseVersion(out), nil
}
