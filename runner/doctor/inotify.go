package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// inotifyCheck compares the inotify instances this user holds (each live
// supervisor holds one while it watches its pane's files) with the
// per-user limit, read from procDir (/proc). Past the limit supervisors
// look at their files instead of being told (a turn's end is seen up to
// 250 ms later), so it warns from 80 % on. No check where there is no
// such limit to read (not Linux).
func inotifyCheck(procDir string) (Check, bool) {
	raw, err := os.ReadFile(filepath.Join(procDir, "sys", "fs", "inotify", "max_user_instances"))
	if err != nil {
		return Check{}, false
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || limit <= 0 {
		return Check{}, false
	}
	used := inotifyInstances(procDir, os.Getuid())
	c := Check{Name: "inotify", Status: CheckOK, Detail: fmt.Sprintf("%d of %d inotify instances in use by this user (one per watching supervisor)", used, limit)}
	if used*5 >= limit*4 {
		c.Status = CheckWarn
		c.Detail += ": past the limit, supervisors poll their files (turn ends seen up to 250 ms later)"
		c.Fix = fmt.Sprintf("raise it: sudo sysctl fs.inotify.max_user_instances=%d", max(1024, 2*limit))
	}
	return c, true
}

// inotifyInstances counts the inotify instances open in uid's processes.
func inotifyInstances(procDir string, uid int) int {
	procs, err := os.ReadDir(procDir)
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		fi, err := os.Stat(filepath.Join(procDir, p.Name()))
		if err != nil { // gone meanwhile
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
			continue
		}
		fds := filepath.Join(procDir, p.Name(), "fd")
		ents, err := os.ReadDir(fds)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if l, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && l == "anon_inode:inotify" {
				n++
			}
		}
	}
	return n
}
