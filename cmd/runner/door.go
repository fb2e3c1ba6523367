package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/runner-cli/runner/runner/door"
)

// ownCommands run inside a sandbox as they are: the agent's hook (it
// writes the task's events file, bound there), the simulated agent, help.
var ownCommands = []string{"hook", "agent-sim", "help", "completion", "__complete", "__completeNoDesc", "-h", "--help"}

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
		if errors.Is(err, context.Canceled) {
			return ExitInterrupted
		}
		if errors.Is(err, door.ErrRefused) {
			return ExitUsage
		}
		return ExitFailed
	}
	out.Write(resp.Stdout)
	errOut.Write(resp.Stderr)
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
