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

// Panes are tasks' panes wherever they run, as the view previews and
// attaches them: the tmux server of a task's pane, here or on its host
// (Env.PaneClient), and the command that puts this terminal on the pane
// of a task on a host (tasks.AttachArgv, not inside a client).
type Panes interface {
	Screen(ctx context.Context, t *state.Task) (Screen, error)
	AttachArgv(ctx context.Context, ref string) ([]string, error)
}

// Deps is what the view reads and acts through, built by cmd/runner from
// its Env: the store, this machine's tmux server, the panes of tasks
// anywhere, and runner's Reconcile as a function. Every field is
// required.
type Deps struct {
	Store Store
	TC    Tmux
	// Reconcile reads the state after recording what became of the
	// tasks nothing supervises (runner.Reconcile).
	Reconcile func(ctx context.Context) (*state.State, error)
	Panes     Panes
}
