package tmuxctl

import (
	"os"
	"strconv"
	"strings"
)

// tmux 3.3a can miss a SIGCHLD under load: the pane's process has exited
// (a zombie, not reaped) and tmux does not know its status until another
// child exits. The exit status is then read from /proc.

// ZombieExit reports whether pid is a zombie (exited, not yet reaped) and,
// when /proc has it, its exit status as a shell shows it (128+N for signal
// N); known is false when the status is not readable. Linux only; elsewhere
// ok is false.
func ZombieExit(pid int) (status int, known, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) == 0 || f[0] != "Z" {
		return 0, false, false
	}
	// Field 52 (f[49]) is the exit code in waitpid form (Linux 3.5+).
	if len(f) < 50 {
		return 0, false, true
	}
	ws, err := strconv.Atoi(f[49])
	if err != nil {
		return 0, false, true
	}
	if sig := ws & 0x7f; sig != 0 {
		return 128 + sig, true, true
	}
	return (ws >> 8) & 0xff, true, true
}
