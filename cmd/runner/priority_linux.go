package main

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// lowerPriority puts this process in the SCHED_IDLE class (it runs only on
// a CPU nothing else wants), else at nice 19. Linux schedules threads, not
// processes: every thread of the process is set, and the threads made
// later inherit it. Best effort: a refusal leaves a thread as it was.
func lowerPriority() {
	tids := []int{0}
	if ents, err := os.ReadDir("/proc/self/task"); err == nil {
		tids = tids[:0]
		for _, e := range ents {
			if tid, err := strconv.Atoi(e.Name()); err == nil {
				tids = append(tids, tid)
			}
		}
	}
	for _, tid := range tids {
		if unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0) != nil {
			_ = unix.Setpriority(unix.PRIO_PROCESS, tid, 19)
		}
	}
}
