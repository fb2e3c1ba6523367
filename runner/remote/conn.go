package remote

import (
	"context"

	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Conn is what a launch's checks and set-up there use of a host's
// connection (Argv, CLIVersion, Hook): its record and a command run there
// in one round trip, its stdout returned. A *hosts.Conn is one; tests
// give a fake.
type Conn interface {
	Host() *state.Host
	Run(ctx context.Context, argv ...string) (string, error)
}

// SandboxConn is a Conn with the client of the host's tmux server, whose
// socket SandboxArgv keeps out of the sandbox.
type SandboxConn interface {
	Conn
	TC() *tmuxctl.Client
}

var _ SandboxConn = (*hosts.Conn)(nil)
