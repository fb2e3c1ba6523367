package procinfo

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

const procDir = "/proc"

func pidDir(pid int) string { return procDir + "/" + strconv.Itoa(pid) }

// readProc is os.ReadFile for a file of /proc, in three system calls
// (open, read to its end, close) where os.ReadFile makes ten (the poller's
// try and its undoing, a stat for a size /proc does not give): a dispatch
// reads the stat of each of its ancestors, gc every process's (issue 51).
// Its errors are os.ReadFile's (*os.PathError).
func readProc(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, 1024)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

func get(pid int) (Proc, bool) {
	b, err := readProc(pidDir(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	uid := -1
	if fi, err := os.Stat(pidDir(pid)); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			uid = int(st.Uid)
		}
	}
	p, ok := parseStat(b, uid)
	if ok && p.State == 'Z' {
		p.State = groupState(pid)
	}
	return p, ok
}

// groupState is the state of a process whose first thread (pid) is a
// zombie: 'Z' once every thread has exited, else the state of one still
// there. A multi-threaded process (a Go program) whose first thread
// exited first is not gone: its other threads still hold its open files
// (and their flock(2) locks) until the last of them exits.
func groupState(pid int) byte {
	ents, _ := os.ReadDir(pidDir(pid) + "/task")
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil || tid == pid {
			continue
		}
		b, err := readProc(pidDir(pid) + "/task/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if q, ok := parseStat(b, -1); ok && q.State != 'Z' && q.State != 'X' {
			return q.State
		}
	}
	return 'Z'
}

func all() ([]Proc, error) {
	ents, err := os.ReadDir(procDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	out := make([]Proc, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if p, ok := get(pid); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

func environ(pid int) ([]string, error) {
	b, err := readProc(pidDir(pid) + "/environ")
	if err != nil {
		return nil, err
	}
	s := strings.TrimSuffix(string(b), "\x00")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\x00"), nil
}

func executable(pid int) (string, error) { return os.Readlink(pidDir(pid) + "/exe") }

func bootID() string {
	b, err := readProc(procDir + "/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func readable() bool {
	_, err := os.Stat(procDir + "/self/stat")
	return err == nil
}

func loadAverage() (float64, bool) {
	b, err := readProc(procDir + "/loadavg")
	if err != nil {
		return 0, false
	}
	return parseLoadavg(string(b))
}

func zombieExit(pid int) (status int, known, zombie bool) {
	b, err := readProc(pidDir(pid) + "/stat")
	if err != nil {
		return 0, false, false
	}
	return statExit(b)
}

func threads() []int {
	ents, err := os.ReadDir(procDir + "/self/task")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out
}
