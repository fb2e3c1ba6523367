package procinfo

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
)

// parseStat parses a Linux /proc/PID/stat line: "pid (comm) state ppid
// pgrp session …". comm may hold spaces and parentheses, so the fields
// are split after the last ')'. uid is the owner, read separately.
func parseStat(b []byte, uid int) (Proc, bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Proc{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil || pid <= 0 {
		return Proc{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 || len(f[0]) == 0 {
		return Proc{}, false
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return Proc{}, false
	}
	return Proc{PID: pid, State: f[0][0], PPID: atoi(f[1]), PGID: atoi(f[2]), SID: atoi(f[3]),
		Comm: string(b[open+1 : end]), Start: start, UID: uid}, true
}

// statExit reads a zombie's exit status from a Linux /proc/PID/stat line:
// field 52, in waitpid's form (Linux 3.5+).
func statExit(b []byte) (status int, known, zombie bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) == 0 || f[0] != "Z" {
		return 0, false, false
	}
	if len(f) < 50 {
		return 0, false, true
	}
	ws, err := strconv.Atoi(f[49])
	if err != nil {
		return 0, false, true
	}
	status, known = waitStatus(ws)
	return status, known, true
}

// waitStatus turns a waitpid status into what a shell shows: the exit
// code, or 128+N for signal N.
func waitStatus(ws int) (int, bool) {
	if sig := ws & 0x7f; sig != 0 {
		return 128 + sig, true
	}
	return (ws >> 8) & 0xff, true
}

// parseLoadavg reads the first field of /proc/loadavg.
func parseLoadavg(s string) (float64, bool) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// darwinLoadavg reads macOS's vm.loadavg (struct loadavg: three fixpt_t
// (uint32) then a long fscale, native byte order; a 64-bit system pads the
// uint32s to 16 bytes before fscale).
func darwinLoadavg(b []byte, order binary.ByteOrder) (float64, bool) {
	if len(b) < 24 {
		return 0, false
	}
	scale := order.Uint64(b[16:24])
	if scale == 0 {
		return 0, false
	}
	return float64(order.Uint32(b[0:4])) / float64(scale), true
}

// darwinState is Linux's letter for a macOS p_stat (sys/proc.h: SIDL 1,
// SRUN 2, SSLEEP 3, SSTOP 4, SZOMB 5).
func darwinState(stat int8) byte {
	switch stat {
	case 1:
		return 'I'
	case 2:
		return 'R'
	case 3:
		return 'S'
	case 4:
		return 'T'
	case 5:
		return 'Z'
	}
	return '?'
}

// darwinProc is the Proc of one macOS kinfo_proc's fields.
func darwinProc(pid, ppid, pgid int32, stat int8, comm []byte, startSec, startUsec int64, ruid uint32) Proc {
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	return Proc{PID: int(pid), PPID: int(ppid), PGID: int(pgid), State: darwinState(stat), Comm: string(comm),
		Start: uint64(startSec)*1_000_000 + uint64(startUsec), UID: int(ruid)}
}

// parseProcArgs2 reads macOS's kern.procargs2 of a process: argc (a native
// int32), the executable's path, NUL padding, argc arguments, then the
// environment, each NUL-terminated, up to an empty string.
func parseProcArgs2(b []byte, order binary.ByteOrder) (exe string, argv, env []string, ok bool) {
	if len(b) < 4 {
		return "", nil, nil, false
	}
	argc := int(int32(order.Uint32(b[:4])))
	rest := b[4:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 || argc < 0 {
		return "", nil, nil, false
	}
	exe, rest = string(rest[:i]), rest[i:]
	for len(rest) > 0 && rest[0] == 0 {
		rest = rest[1:]
	}
	next := func() (string, bool) {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			if len(rest) == 0 {
				return "", false
			}
			s := string(rest)
			rest = nil
			return s, true
		}
		s := string(rest[:i])
		rest = rest[i+1:]
		return s, true
	}
	for range argc {
		s, more := next()
		if !more {
			return exe, argv, nil, false
		}
		argv = append(argv, s)
	}
	for {
		s, more := next()
		if !more || s == "" {
			break
		}
		env = append(env, s)
	}
	return exe, argv, env, true
}
