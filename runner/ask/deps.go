package ask

import (
	"context"

	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Deps is what asking uses, built by cmd/runner from its Env: the store
// (the targets' task text), the profiles, the environment, and what it
// asks of package runner as functions. Every field is required but
// Environ.
type Deps struct {
	Store    *state.Store
	Profiles []*profile.Profile
	// Getenv looks a variable up in the environment runner was given
	// (Env.Env); Environ lists it for the shadows (nil: the process's).
	Getenv  func(name string) string
	Environ func() []string
	// Reconcile reads the state after recording what became of the
	// tasks nothing supervises (runner.Reconcile).
	Reconcile func(ctx context.Context) (*state.State, error)
	// CallerTask is the id of the task this process runs under, ""
	// outside any (runner.CallerTask; panes nil: listed if needed).
	CallerTask func(ctx context.Context, st *state.State, panes []tmuxctl.PaneInfo) string
	// ResolveArgv makes a shadow's argv[0] absolute (runner.ResolveArgv);
	// ShadowSandbox wraps the argv of a shadow of task t in a sandbox
	// (runner.ShadowSandbox).
	ResolveArgv   func(prof *profile.Profile, argv []string) ([]string, error)
	ShadowSandbox func(t *state.Task, prof *profile.Profile, argv []string) ([]string, error)
	// TreeOnly refuses a target outside the caller's tree of tasks: the
	// caller is a sandboxed task that asked through its door
	// (messaging.ReachTree).
	TreeOnly bool
}
