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
	"path/filepath"

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

// Program is the name runner-ext is installed under, beside runner.
const Program = "runner-ext"

// self is the runner these commands run for the user's actions (serve's
// requests, mcp's tools, watch's keys): the one that started runner-ext,
// which passes its own absolute path as the first argument (whatever its
// name: a runner installed as runner-1.2 too), or, for a runner-ext
// started by hand, the runner beside it.
func self() string {
	arg0 := os.Args[0]
	if filepath.IsAbs(arg0) && filepath.Base(arg0) != Program {
		return arg0
	}
	if exe, err := os.Executable(); err == nil && filepath.Base(exe) == Program {
		return filepath.Join(filepath.Dir(exe), "runner")
	}
	return open.Self(arg0)
}
