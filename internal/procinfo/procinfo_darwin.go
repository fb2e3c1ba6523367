package procinfo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// kinfo is the Proc of a kinfo_proc; its session comes from getsid(2),
// which kinfo_proc does not hold (0 when refused).
func kinfo(k *unix.KinfoProc) Proc {
	p := darwinProc(k.Proc.P_pid, k.Eproc.Ppid, k.Eproc.Pgid, k.Proc.P_stat, k.Proc.P_comm[:],
		int64(k.Proc.P_starttime.Sec), int64(k.Proc.P_starttime.Usec), k.Eproc.Pcred.P_ruid)
	if sid, err := unix.Getsid(p.PID); err == nil {
		p.SID = sid
	}
	return p
}

func get(pid int) (Proc, bool) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || k.Proc.P_pid != int32(pid) {
		return Proc{}, false // an unknown pid gives an empty record
	}
	return kinfo(k), true
}

func all() ([]Proc, error) {
	ks, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, fmt.Errorf("%w: sysctl kern.proc.all: %v", ErrUnsupported, err)
	}
	out := make([]Proc, 0, len(ks))
	for i := range ks {
		if ks[i].Proc.P_pid > 0 {
			out = append(out, kinfo(&ks[i]))
		}
	}
	return out, nil
}

// procArgs reads kern.procargs2 of pid (the caller's own processes only).
func procArgs(pid int) (exe string, env []string, err error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return "", nil, fmt.Errorf("sysctl kern.procargs2 of %d: %w", pid, err)
	}
	exe, _, env, ok := parseProcArgs2(b, binary.NativeEndian)
	if !ok {
		return "", nil, fmt.Errorf("sysctl kern.procargs2 of %d: %w", pid, errors.New("unreadable record"))
	}
	return exe, env, nil
}

func environ(pid int) ([]string, error) {
	_, env, err := procArgs(pid)
	return env, err
}

func executable(pid int) (string, error) {
	exe, _, err := procArgs(pid)
	return exe, err
}

func bootID() string {
	s, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

func readable() bool {
	_, ok := get(unix.Getpid())
	return ok
}

func loadAverage() (float64, bool) {
	b, err := unix.SysctlRaw("vm.loadavg")
	if err != nil {
		return 0, false
	}
	return darwinLoadavg(b, binary.NativeEndian)
}

func zombieExit(pid int) (status int, known, zombie bool) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || k.Proc.P_pid != int32(pid) || darwinState(k.Proc.P_stat) != 'Z' {
		return 0, false, false
	}
	status, known = waitStatus(int(k.Proc.P_xstat))
	return status, known, true
}

// threads: macOS sets a process's priority as a whole.
func threads() []int { return nil }
