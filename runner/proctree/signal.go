package proctree

import (
	"errors"
	"strconv"
	"syscall"

	"github.com/runner-cli/runner/internal/procinfo"
)

// TmuxServerComm is the name a tmux server process runs under. A tmux
// server started from a task's pane inherits that pane's environment, but
// it is no process of the task: its panes are other tasks' (or the
// user's). End never signals one, and Descendants never walks through one.
const TmuxServerComm = "tmux: server"

// IsTmuxServer reports whether p is a tmux server.
func IsTmuxServer(p Proc) bool { return p.Comm == TmuxServerComm }

// target is a process End has taken: a pidfd on it where the kernel has
// them, so a signal reaches that process and never one that got its pid
// after it exited.
type target struct {
	Proc
	fd int // -1: no pidfd (old kernel); signals go by pid, checked against Start first
}

// take opens a pidfd on p and checks that the pid still is p (same start
// time) once the pidfd holds it.
func take(p Proc) (*target, bool) {
	fd, err := pidfdOpen(p.PID)
	if err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil, false
		}
		fd = -1 // ENOSYS and the like: no pidfds here
	}
	if q, ok := readStat(p.PID); !ok || q.Start != p.Start {
		if fd >= 0 {
			closeFD(fd)
		}
		return nil, false
	}
	return &target{Proc: p, fd: fd}, true
}

// signal sends sig to the process taken.
func (t *target) signal(sig syscall.Signal) error {
	if t.fd >= 0 {
		return pidfdSignal(t.fd, sig)
	}
	if q, ok := readStat(t.PID); !ok || q.Start != t.Start {
		return syscall.ESRCH
	}
	return syscall.Kill(t.PID, sig)
}

func (t *target) close() {
	if t.fd >= 0 {
		closeFD(t.fd)
		t.fd = -1
	}
}

// Identity returns what tells the live process pid apart from any other
// that had or will have its pid: the boot's id and the process's start
// time ("" when pid is not running). Record it with a pid that must be
// checked later (a supervisor's): after a reboot, or once the process is
// gone, the pid may be another program's.
func Identity(pid int) string {
	p, ok := readStat(pid)
	if !ok || p.State == 'Z' {
		return ""
	}
	return procinfo.BootID() + ":" + strconv.FormatUint(p.Start, 10)
}

// AliveAs reports whether pid is a live process with the identity ident
// (from Identity). An empty ident (a record from before identities were
// kept) checks only that pid is alive.
func AliveAs(pid int, ident string) bool {
	if !Alive(pid) {
		return false
	}
	if ident == "" {
		return true
	}
	got := Identity(pid)
	return got == "" && !procinfo.Readable() || got == ident
}

// SignalAs sends sig to pid, if it is the live process ident names (see
// AliveAs), through a pidfd: never to a process that got the pid later.
func SignalAs(pid int, ident string, sig syscall.Signal) error {
	p, ok := readStat(pid)
	if !ok || p.State == 'Z' {
		return syscall.ESRCH
	}
	tg, ok := take(p)
	if !ok {
		return syscall.ESRCH
	}
	defer tg.close()
	if ident != "" && Identity(pid) != ident {
		return syscall.ESRCH
	}
	return tg.signal(sig)
}
