package ask

import (
	"context"

	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Core is what asking asks of package runner: Reconcile reads the state
// after recording what became of the tasks nothing supervises;
// CallerTask is the id of the task this process runs under, "" outside
// any (panes nil: listed if needed); ResolveArgv makes a shadow's argv[0]
// absolute; ShadowSandbox wraps the argv of a shadow of task t in a
// sandbox.
type Core interface {
	Reconcile(ctx context.Context) (*state.State, error)
	CallerTask(ctx context.Context, st *state.State, panes []tmuxctl.PaneInfo) string
	ResolveArgv(prof *profile.Profile, argv []string) ([]string, error)
	ShadowSandbox(t *state.Task, prof *profile.Profile, argv []string) ([]string, error)
}

// TaskTexts is where a shadow reads its task's text: a *state.Store.
type TaskTexts interface {
	TaskText(t *state.Task) (string, error)
}

// Environment is the environment runner was given (open.Core): one
// variable (Getenv: whether the caller is confined), and the whole list
// (Environ: the shadows').
type Environment interface {
	Getenv(name string) string
	Environ() []string
}

// Deps is what asking uses, built by cmd/runner from its Env: the store
// (the targets' task text), the profiles, the environment, and Core.
// Every field is required but Hosts.
type Deps struct {
	Store    TaskTexts
	Profiles []*profile.Profile
	// Env is the environment runner was given (open.Core).
	Env Environment
	// Core is what asking asks of package runner (open.Core).
	Core
	// Hosts reaches the host a target runs on, for its shadow there
	// (runShadowThere); nil: such a shadow is not run, its answer says so.
	Hosts func(ctx context.Context, name string) (Host, error)
	// TreeOnly refuses a target outside the caller's tree of tasks: the
	// caller is a sandboxed task that asked through its door
	// (messaging.ReachTree).
	TreeOnly bool
}
