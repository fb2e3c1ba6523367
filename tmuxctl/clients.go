package tmuxctl

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ClientInfo is one terminal attached to the server.
type ClientInfo struct {
	TTY      string `json:"tty"`
	Session  string `json:"session"`   // the session the client shows
	WindowID string `json:"window_id"` // the window the client shows (@N)
}

// Clients lists the attached clients with the session and window each one
// shows. A server that is not running has none.
func (c *Client) Clients(ctx context.Context) ([]ClientInfo, error) {
	out, err := c.run(ctx, nil, "list-clients", "-F", "#{client_tty}"+fieldSep+"#{client_session}"+fieldSep+"#{window_id}")
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("list clients: %w", err)
	}
	var list []ClientInfo
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		f := strings.Split(line, fieldSep)
		if len(f) != 3 {
			continue
		}
		list = append(list, ClientInfo{TTY: f[0], Session: f[1], WindowID: f[2]})
	}
	return list, nil
}
