package profile

import (
	"fmt"

	"github.com/runner-cli/runner/runner/fault"
)

// HookEnv is what a rendered hook adds to the agent's environment penv:
// hl.Env, each value merged into the user's own when the hook's are JSON
// objects (EnvMergeJSON). A user's value that cannot take the merge is a
// usage error naming the agent and the variable.
func (p *Profile) HookEnv(penv []string, hl HookLaunch) ([]string, error) {
	if !p.Hook.EnvMergeJSON {
		return hl.Env, nil
	}
	env, err := MergeJSONEnv(penv, hl.Env)
	if err != nil {
		return nil, fmt.Errorf("agent %s: runner's turn-end hook: %v (fix the variable, or run without runner's hook: --no-hook): %w", p.Name, err, fault.ErrUsage)
	}
	return env, nil
}
