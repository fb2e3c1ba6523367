package ask

import (
	"context"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestTakesDepsNotEnv keeps the package doc true: what it uses comes in
// Deps, not through package runner.
func TestTakesDepsNotEnv(t *testing.T) {
	importcheck.None(t, ".", importcheck.Module+"runner")
}

// depsOf is the Deps of env, built as cmd/runner builds it.
func depsOf(env *runner.Env) Deps {
	return Deps{
		Store: env.Store, Profiles: env.Profiles, Getenv: runner.GetenvOf(env), Environ: env.Environ,
		Reconcile: func(ctx context.Context) (*state.State, error) { return runner.Reconcile(ctx, env) },
		CallerTask: func(ctx context.Context, st *state.State, panes []tmuxctl.PaneInfo) string {
			return runner.CallerTask(ctx, env, st, panes)
		},
		ResolveArgv: func(prof *profile.Profile, argv []string) ([]string, error) {
			return runner.ResolveArgv(env, prof, argv)
		},
		ShadowSandbox: func(t *state.Task, prof *profile.Profile, argv []string) ([]string, error) {
			return runner.ShadowSandbox(env, t, prof, argv)
		},
	}
}
