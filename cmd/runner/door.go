package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/runner-cli/runner/internal/untrusted"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/confine"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
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
// runner outside the sandbox through the door at path and gives back its
// output and exit code.
func callDoor(ctx context.Context, path string, args []string, in io.Reader, out, errOut io.Writer) int {
	req := door.Request{Args: args}
	if readsStdin(args) {
		b, err := io.ReadAll(io.LimitReader(in, door.MaxMessage/2+1))
		if err != nil {
			fmt.Fprintln(errOut, "runner: read standard input:", err)
			return ExitUsage
		}
		if len(b) > door.MaxMessage/2 {
			fmt.Fprintf(errOut, "runner: standard input over %d bytes: too much for runner's door\n", door.MaxMessage/2)
			return ExitUsage
		}
		req.Stdin = b
	}
	req.Cwd, _ = os.Getwd()
	resp, err := door.Call(ctx, path, req)
	if err != nil {
		fmt.Fprintln(errOut, "runner:", err)
		return exitCode(err)
	}
	out.Write(resp.Stdout)
	errOut.Write(resp.Stderr)
	if err := resp.Err(); err != nil {
		return exitCode(err) // the door answered itself (its stderr says why)
	}
	return resp.Code
}

// readsStdin reports whether an argument reads standard input: "-", or
// -f/--file -.
func readsStdin(args []string) bool {
	for i, a := range args {
		if a == "--" {
			return slices.Contains(args[i+1:], "-")
		}
		if a == "-" || a == "--file=-" || a == "-f=-" || a == "-f-" {
			return true
		}
	}
	return false
}

// confinedFlags are the flags each command the door carries takes from a
// confined caller (a request that came through a sandboxed task's door,
// RUNNER_CONFINED), by their long names: checkConfined refuses any other
// flag that was given, after cobra parsed them with the command's real
// flag set (so --socket=x, -fX and the like are seen as what they are).
// Nothing here selects runner's own resources: no --socket (the tmux
// server), no --host, no --notify (a command runner would run), no
// --source (who asked), no group (--agents, --tries, --check …). A flag
// added to a command later stays closed to a sandboxed task until it is
// listed here.
var confinedFlags = map[string][]string{
	"msg":     {"file", "json", "type"},
	"inbox":   {"json"},
	"status":  {"json"},
	"ps":      {"all", "json", "project"},
	"tree":    {"json"},
	"wait":    {"all", "any", "input", "json", "print-answer", "project", "timeout"},
	"ask":     {"file", "json", "parallel", "timeout"},
	"version": {"json"},
	"dispatch": {"after", "agent", "agent-arg", "approve-rule", "awareness", "budget-tokens", "budget-usd",
		"commit", "commit-all", "commit-branch", "detach", "exclusive", "file", "from", "idle", "json",
		"limit-wait", "max-turns", "model", "no-hook", "on-limit", "overlap-messages", "permissions",
		"print-answer", "ready-timeout", "require-snapshot", "sandbox", "sandbox-home", "size", "timeout",
		"wait-input", "wait-lock", "worktree", "yes-trust"},
}

// confinedFlag reports whether a confined caller may give flag name to
// the door command cmd ("help" always: it only prints).
func confinedFlag(cmd, name string) bool {
	return name == "help" || slices.Contains(confinedFlags[cmd], name)
}

// maxConfinedFile bounds a --file a confined caller names: the door's own
// bound on standard input.
const maxConfinedFile = door.MaxMessage / 2

// readConfinedFile reads a --file given through a sandboxed task's door:
// runner reads it outside the sandbox, so only a file inside the task's
// own folder (door.EnvConfinedDir) is read, by the untrusted rules (a
// regular file, no link anywhere on its path, never blocking, bounded):
// runner's state, config and every file the sandbox hides stay hidden.
// "-" (standard input, sent with the request) is read as usual.
func (a *app) readConfinedFile(file string) (string, error) {
	dir := a.getenv(door.EnvConfinedDir)
	if dir == "" || !filepath.IsAbs(dir) {
		return "", fault.Usagef("--file %s: a sandboxed task gives its text as an argument or with --file - (standard input)", file)
	}
	name := file
	if !filepath.IsAbs(name) {
		// The door runs runner in the caller's folder, inside the task's.
		if wd, err := os.Getwd(); err == nil {
			name = filepath.Join(wd, name)
		}
	}
	b, err := untrusted.ReadBeneath(dir, name, maxConfinedFile)
	if err != nil {
		return "", fault.Usagef("--file: a sandboxed task's file must be a regular file inside its folder %s (or --file - for standard input): %v", dir, err)
	}
	return string(b), nil
}

// treeOnly reports whether this command's messages and questions reach
// only the caller's tree of tasks: it came through a sandboxed task's
// door, and the config's sandbox_reach is not "all".
func (a *app) treeOnly(cfg *config.Config) bool {
	return a.getenv(door.EnvConfined) != "" && (cfg == nil || cfg.SandboxReach != messaging.ReachAll)
}
