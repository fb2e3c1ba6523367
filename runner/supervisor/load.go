package supervisor

import (
	"fmt"
	"runtime"

	"github.com/runner-cli/runner/internal/procinfo"
)

// busyMachine says, for a start-up that ran out of time, whether the
// machine was overloaded: "" when it was not (or it cannot tell), else a
// note with the load average against the CPUs and what to do. Many agents
// started at once on few cores are the usual cause (issue 13's load test:
// 1 000 at once on 2 cores).
var busyMachine = func() string {
	load, ok := procinfo.LoadAverage()
	if !ok {
		return ""
	}
	return loadNote(load, runtime.NumCPU())
}

// loadNote is busyMachine's note for a 1-minute load average on cpus
// CPUs: a load above twice the CPUs is an overloaded machine.
func loadNote(load float64, cpus int) string {
	if cpus <= 0 || load <= 2*float64(cpus) {
		return ""
	}
	return fmt.Sprintf("; the machine was overloaded (load average %.1f on %d CPUs): start fewer agents at a time, or give them a longer --ready-timeout", load, cpus)
}
