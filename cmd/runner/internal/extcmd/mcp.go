package extcmd

import (
	"os"
	"slices"
	"strings"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/runner/mcpserver"
	"github.com/spf13/cobra"
)

// NewMCPCmd is runner mcp over f.
func (c *Cmds) NewMCPCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve runner's tools to an MCP client on standard input and output",
		Long: `Serve runner as an MCP server (Model Context Protocol) over standard input and
output, for an agent's CLI or an editor that starts it: claude mcp add runner -- runner mcp.

The tools are runner's commands, run as they are, each giving back what its
--json prints: runner_dispatch (always detached: the task record),
runner_list (ps --all), runner_status, runner_wait (at most 10 minutes a
call), runner_send, runner_answer, runner_cancel and runner_events (a page of
the event stream). A tool whose runner exits non-zero is a tool error
carrying runner's message. Arguments are named after the CLI's (dispatch:
project, task, agent, model, worktree …; wait: id, timeout).

A sandboxed task cannot run it: runner mcp is not a command of its door.
runner serve offers the same tools over HTTP at /mcp, behind its token.
See docs/mcp.md.`,
		Example: `  runner mcp   # started by an MCP client: serves until standard input closes`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return mcpserver.Stdio(cmd.Context(), c.mcpOptions(), c.f.In, c.f.RawOut)
		},
	}
}

// mcpOptions are runner mcp's: each tool runs this runner with the
// server's environment as it is, on the tmux server --socket names. A
// server an agent started in its task's pane keeps the task's identity,
// as the agent's own runner commands do: its dispatches are the task's
// children, held to the same limits of lineage and breadth.
func (c *Cmds) mcpOptions() mcpserver.Options {
	environ := os.Environ()
	if socket := c.f.Socket(); socket != "" {
		environ = append(slices.DeleteFunc(environ, func(kv string) bool {
			return strings.HasPrefix(kv, "RUNNER_TMUX_SOCKET=")
		}), "RUNNER_TMUX_SOCKET="+socket)
	}
	return mcpserver.Options{Exe: self(), Environ: environ, Version: c.version, Meaning: exitcode.Meaning}
}
