// Package extcmd holds the commands of runner that link libraries every
// other command would pay for at its start: runner serve (net/http, TLS,
// the official MCP SDK), runner mcp (the MCP SDK), runner watch (the TUI
// library) and the push sender (an HTTPS client). They are built into
// runner-ext, the second program installed beside runner; runner runs it
// for them (issue 51: a Go program's start grows with what it links, and
// every hook event, door call and supervisor starts runner).
package extcmd

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/open"
)

// Cmds builds the commands over a factory and the version runner-ext
// reports (runner mcp's server).
type Cmds struct {
	f       *cmdkit.Factory
	version string
}

// New returns the commands' builder over f; version is the binary's.
func New(f *cmdkit.Factory, version string) *Cmds { return &Cmds{f: f, version: version} }

// Build builds the command named name (one of Names), nil for another.
func (c *Cmds) Build(name string) *cobra.Command {
	switch name {
	case "serve":
		return c.NewServeCmd()
	case "mcp":
		return c.NewMCPCmd()
	case "watch":
		return c.NewWatchCmd()
	case "push-send":
		return c.NewPushSendCmd()
	}
	return nil
}

// Names are the commands runner-ext serves, in the order runner lists
// them.
var Names = []string{"watch", "serve", "mcp", "push-send"}

// self is the runner these commands run for the user's actions (serve's
// requests, mcp's tools, watch's keys): the one named by this process's
// first argument, which runner sets to its own path when it runs
// runner-ext (open.Self).
func self() string { return open.Self(os.Args[0]) }
