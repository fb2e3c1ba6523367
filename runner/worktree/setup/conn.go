package setup

import (
	"context"

	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/state"
)

// Conn is what the set-up of a worktree on a host uses of its connection
// (ApplyThere, CopyIncludedThere): its record, a script run there in one
// round trip, and the ssh transport that runs the set-up command with its
// whole output and exit status. A *hosts.Conn is one; tests give a fake.
type Conn interface {
	Host() *state.Host
	Run(ctx context.Context, argv ...string) (string, error)
	Transport() *transport.SSH
}

var _ Conn = (*hosts.Conn)(nil)
