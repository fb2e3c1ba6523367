package main

import (
	"github.com/runner-cli/runner/internal/procinfo"
	"golang.org/x/sys/unix"
)

// lowerPriority puts this process in the SCHED_IDLE class (it runs only on
// a CPU nothing else wants), else at nice 19. Linux schedules threads, not
// processes: every thread of the process is set, and the threads made
// later inherit it. Best effort: a refusal leaves a thread as it was.
func lowerPriority() {
	tids := procinfo.Threads()
	if len(tids) == 0 {
		tids = []int{0}
	}
	for _, tid := range tids {
		if unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0) != nil {
			_ = unix.Setpriority(unix.PRIO_PROCESS, tid, 19)
		}
	}
}
