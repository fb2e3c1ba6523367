package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/confine"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/messaging"
)

// ownCommands run inside a sandbox as they are: the agent's hook (it
// writes the task's events file, bound there), the simulated agent, the
// sandbox's own check before its agent starts (sandbox-exec), help.
var ownCommands = []string{"hook", "agent-sim", confine.SandboxExec, "help", "completion", "__complete", "__completeNoDesc", "-h", "--help"}

// throughDoor reports whether runner, in a sandboxed task's pane
// ($RUNNER_DOOR set), sends args through the task's door: every command
// but ownCommands (the door refuses those it does not carry, saying so).
func throughDoor(args []string) bool {
	return len(args) > 0 && !slices.Contains(ownCommands, args[0])
}

// callDoor sends args (and standard input, when an argument reads it) to
// runner outside the sandbox through the door at path, prints its output
// and gives back its exit code.
func callDoor(ctx context.Context, path string, args []string, in io.Reader, out, errOut io.Writer) int {
	cwd, _ := os.Getwd()
	resp, err := door.Forward(ctx, path, args, in, cwd)
	if err != nil {
		fmt.Fprintln(errOut, "runner:", err)
		return exitcode.Of(err)
	}
	out.Write(resp.Stdout)
	errOut.Write(resp.Stderr)
	if err := resp.Err(); err != nil {
		return exitcode.Of(err) // the door answered itself (its stderr says why)
	}
	return resp.Code
}

// confinedFlags are door.ConfinedFlags: what checkConfined lets a
// confined caller give to cmd.
func confinedFlags(cmd string) []string {
	flags, _ := door.ConfinedFlags(cmd)
	return flags
}

// confinedFlag is door.ConfinedFlag.
func confinedFlag(cmd, name string) bool { return door.ConfinedFlag(cmd, name) }

// treeOnly reports whether this command's messages and questions reach
// only the caller's tree of tasks: it came through a sandboxed task's
// door, and the config's sandbox_reach is not "all".
func (a *app) treeOnly(cfg *config.Config) bool {
	return a.getenv(door.EnvConfined) != "" && (cfg == nil || cfg.SandboxReach != messaging.ReachAll)
}
