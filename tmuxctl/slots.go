// A bound, across all processes of this machine, on the tmux clients in
// flight to one server.

package tmuxctl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/runner-cli/runner/internal/filelock"
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
// flock on one of MaxClients files in a directory of the temporary
// directory named after the server. It waits for ctx only; a slot holder's
// call is bounded by its own timeout. If the directory cannot be made,
// the call goes unbounded (release is then a no-op).
func (c *Client) slot(ctx context.Context) (func(), error) {
	c.slotsOnce.Do(func() {
		sum := sha256.Sum256([]byte(c.socket))
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("runner-tmux-%d", os.Getuid()), hex.EncodeToString(sum[:8]))
		if os.MkdirAll(dir, 0o700) == nil {
			c.slotsDir = dir
		}
	})
	if c.slotsDir == "" {
		return func() {}, nil
	}
	return filelock.Slot(ctx, c.slotsDir, MaxClients)
}
