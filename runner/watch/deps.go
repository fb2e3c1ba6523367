package watch

import (
	"context"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Store is the state the view reads and watches: a *state.Store.
type Store interface {
	Read(ctx context.Context) (*state.State, error)
	// Watch signals each change of the state directory.
	Watch(ctx context.Context) (<-chan struct{}, error)
}

// Tmux is this machine's tmux server as attach uses it: a
// *tmuxctl.Client.
type Tmux interface {
	SelectPane(ctx context.Context, pane string) error
	// Command runs a tmux command (switch-client, display-message).
	Command(ctx context.Context, args ...string) (string, error)
	AttachArgv(target string, insideTmux bool) []string
}

// Screen is a tmux server as the preview reads a pane of it: a
// *tmuxctl.Client, here or on a task's host.
type Screen interface {
	Capture(ctx context.Context, pane string, opts tmuxctl.CaptureOptions) (string, error)
}

// Deps is what the view reads and acts through, built by cmd/runner from
// its Env: the store, this machine's tmux server, and what it asks of
// packages runner and tasks as functions. Every field is required.
type Deps struct {
	Store Store
	TC    Tmux
	// Reconcile reads the state after recording what became of the
	// tasks nothing supervises (runner.Reconcile).
	Reconcile func(ctx context.Context) (*state.State, error)
	// PaneClient is the tmux server of a task's pane, here or on its
	// host (Env.PaneClient).
	PaneClient func(ctx context.Context, t *state.Task) (Screen, error)
	// AttachArgv is the command that puts this terminal on a task's
	// pane on a host (tasks.AttachArgv, not inside a client).
	AttachArgv func(ctx context.Context, ref string) ([]string, error)
}
