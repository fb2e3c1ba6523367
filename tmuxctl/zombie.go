package tmuxctl

import "github.com/runner-cli/runner/internal/procinfo"

// tmux 3.3a can miss a SIGCHLD under load: the pane's process has exited
// (a zombie, not reaped) and tmux does not know its status until another
// child exits. The exit status is then read from the process table.

// ZombieExit reports whether pid is a zombie (exited, not yet reaped) and,
// where the system keeps it, its exit status as a shell shows it (128+N
// for signal N); known is false when the status is not readable. ok is
// false for a live process, or where process facts cannot be read.
func ZombieExit(pid int) (status int, known, ok bool) {
	return procinfo.ZombieExit(pid)
}
