// Package procinfo is the one place that reads facts about processes from
// the operating system: their parent, group, session, state, owner,
// command, start time and environment, the boot's identity, the load
// average and a zombie's exit status. Linux reads /proc; macOS asks the
// kernel through sysctl (kern.proc, kern.procargs2, kern.bootsessionuuid,
// vm.loadavg); elsewhere (FreeBSD) every call says ErrUnsupported or
// "unknown", and its callers fall back as they do for another user's
// process.
//
// The parsers of what each system returns are plain functions, tested on
// any system (parse.go).
package procinfo

import "errors"

// ErrUnsupported is returned where this system's process table cannot be
// read by runner.
var ErrUnsupported = errors.New("process table not readable on this system (Linux and macOS only)")

// Proc is one process.
type Proc struct {
	PID, PPID, PGID, SID int
	// State is the process's state as Linux's ps letters it: R running,
	// S sleeping, D disk wait, Z zombie, T stopped, I idle (new).
	State byte
	// Comm is the program name as the kernel keeps it (at most 15 bytes
	// on Linux, 16 on macOS).
	Comm string
	// Start is the process's start time in the system's own unit (clock
	// ticks since boot on Linux, microseconds since the epoch on macOS):
	// only ever compared with another Start of the same system, to tell
	// a reused pid apart.
	Start uint64
	// UID is the process's real user (-1: unknown).
	UID int
}

// Zombie reports whether p has exited and was not reaped yet: every one of
// its threads (State is 'Z' only then; see Get).
func (p Proc) Zombie() bool { return p.State == 'Z' }

// Get returns process pid (false when it does not exist or cannot be read).
// Its State is that of the process, not of its first thread: 'Z' only
// once every thread has exited (on Linux the first thread shows 'Z' as
// soon as it exits itself, while the others may still run, holding the
// process's open files).
func Get(pid int) (Proc, bool) {
	if pid <= 0 {
		return Proc{}, false
	}
	return get(pid)
}

// All returns every process that could be read; processes that vanish
// while it reads are left out. It fails with ErrUnsupported where the
// table cannot be read.
func All() ([]Proc, error) { return all() }

// Environ returns the environment pid was started with (a later unsetenv
// does not hide a variable). It fails for another user's process, one
// that is gone, or with ErrUnsupported.
func Environ(pid int) ([]string, error) { return environ(pid) }

// Executable returns the path of the program pid runs.
func Executable(pid int) (string, error) { return executable(pid) }

// BootID names this boot of the machine ("" where unknown): with a start
// time, it tells a process apart from any other, across reboots too.
func BootID() string { return bootID() }

// Readable reports whether this system's process facts can be read at
// all (false: every Get fails, whatever the pid).
func Readable() bool { return readable() }

// LoadAverage returns the 1-minute load average (false where unknown).
func LoadAverage() (float64, bool) { return loadAverage() }

// ZombieExit reports whether pid is a zombie (exited, not yet reaped)
// and, where the system keeps it, its exit status as a shell shows it
// (128+N for signal N); known is false when the status is not readable.
func ZombieExit(pid int) (status int, known, zombie bool) { return zombieExit(pid) }

// Threads returns the ids of this process's threads where the system
// schedules threads one by one (Linux), else nil.
func Threads() []int { return threads() }
