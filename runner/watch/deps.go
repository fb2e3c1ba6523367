package watch

import (
	"context"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Deps is what the view reads and acts through, built by cmd/runner from
// its Env: the store, this machine's tmux server, and what it asks of
// packages runner and tasks as functions. Every field is required.
type Deps struct {
	Store *state.Store
	TC    *tmuxctl.Client
	// Reconcile reads the state after recording what became of the
	// tasks nothing supervises (runner.Reconcile).
	Reconcile func(ctx context.Context) (*state.State, error)
	// PaneClient is the tmux client of a task's pane, here or on its
	// host (Env.PaneClient).
	PaneClient func(ctx context.Context, t *state.Task) (*tmuxctl.Client, error)
	// AttachArgv is the command that puts this terminal on a task's
	// pane on a host (tasks.AttachArgv, not inside a client).
	AttachArgv func(ctx context.Context, ref string) ([]string, error)
}
