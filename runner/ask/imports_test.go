package ask

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/open"
)

// TestTakesDepsNotEnv keeps the package doc true: what it uses comes in
// Deps, not through package runner.
func TestTakesDepsNotEnv(t *testing.T) {
	importcheck.None(t, ".", importcheck.Module+"runner")
}

// depsOf is the Deps of env, built as cmd/runner builds it.
func depsOf(env *runner.Env) Deps {
	return Deps{
		Store: env.Store, Profiles: env.Profiles, Env: open.Core{Env: env},
		Core: open.Core{Env: env},
	}
}
