package tasks

import (
	"context"

	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/state"
)

// Store is the state the operations on tasks read: a *state.Store.
type Store interface {
	Read(ctx context.Context) (*state.State, error)
	// Watch signals each change of the state (Wait).
	Watch(ctx context.Context) (<-chan struct{}, error)
}

// Tmux is a tmux server as attach uses it: a *tmuxctl.Client.
type Tmux interface {
	SelectPane(ctx context.Context, pane string) error
	AttachArgv(target string, insideTmux bool) []string
	HostAttachArgv(target string) []string
}

// Host is a registered host as attach reaches it: a *hosts.Conn (Hosts
// makes one of each).
type Host interface {
	// Tmux is the tmux server there.
	Tmux() Tmux
	// TerminalArgv is the command line (ssh first) that runs argv there
	// on this terminal.
	TerminalArgv(argv ...string) []string
}

// Hosts is Deps.HostConn over conn (hosts.Pool.Conn).
func Hosts(conn func(ctx context.Context, name string) (*hosts.Conn, error)) func(ctx context.Context, name string) (Host, error) {
	return func(ctx context.Context, name string) (Host, error) {
		c, err := conn(ctx, name)
		if err != nil {
			return nil, err
		}
		return hostConn{c}, nil
	}
}

// hostConn is a Host over a connection of package hosts.
type hostConn struct{ c *hosts.Conn }

func (h hostConn) Tmux() Tmux                           { return h.c.TC() }
func (h hostConn) TerminalArgv(argv ...string) []string { return h.c.Transport().TerminalArgv(argv...) }

// Deps is what the operations on tasks use, built by cmd/runner from its
// Env: the store, the tmux server, the hosts, and package runner's
// reconciliation as a function. Every field is required.
type Deps struct {
	Store Store
	// TC is this machine's tmux server (attach).
	TC Tmux
	// Reconcile reads the state after recording what became of the
	// tasks nothing supervises (runner.Reconcile).
	Reconcile func(ctx context.Context) (*state.State, error)
	// HostConn is the connection to a registered host (Hosts over
	// hosts.Pool.Conn).
	HostConn func(ctx context.Context, name string) (Host, error)
	// Say writes one line of progress (Env.Say).
	Say func(format string, args ...any)
	// ExitOf is the exit code a task's outcome stands for (cmd/runner's
	// table): a child's in Collect.
	ExitOf func(t *state.Task) int
}
