// A bound, across all processes of this machine, on the tmux clients in
// flight to one server.

package tmuxctl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/runner-cli/runner/internal/filelock"
	"github.com/runner-cli/runner/internal/privdir"
)

// MaxClients is how many tmux clients runner's processes run at once
// against one tmux server, all processes together. The server runs one
// command at a time: past a few clients in flight, more only queue in the
// server, where the queue's wait counts against each call's timeout. At
// 500 dispatches at once, 400 clients queued for 5–8 s each and calls
// failed their 10 s timeout; held here instead, a call's timeout counts
// from when its client starts.
const MaxClients = 8

// slot takes one of the MaxClients slots of the client's server: an
// flock on one of MaxClients files in a private directory (privdir:
// $XDG_RUNTIME_DIR/runner-tmux/HASH or $TMPDIR/runner-tmux-UID/HASH) named
// after the server. It waits for ctx only; a slot holder's call is bounded
// by its own timeout. If no private directory can be had (another user
// made it first), the call goes unbounded (release is then a no-op), said
// once on stderr: another user's flocks must not hold runner's calls.
//
// The directory is asked of privdir at each call (it remembers it, and
// makes it again if it went: a cleaner of /tmp under a supervisor that
// lives for weeks), so that a removed one never fails every later call.
func (c *Client) slot(ctx context.Context) (func(), error) {
	c.slotsOnce.Do(func() {
		sum := sha256.Sum256([]byte(c.socket))
		c.slotsName = hex.EncodeToString(sum[:8])
	})
	dir, err := privdir.Dir("tmux", c.slotsName)
	if err != nil {
		return func() {}, nil
	}
	return filelock.Slot(ctx, dir, MaxClients)
}
