package supervisor

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// busyMachine says, for a start-up that ran out of time, whether the
// machine was overloaded: "" when it was not (or it cannot tell), else a
// note with the load average against the CPUs and what to do. Many agents
// started at once on few cores are the usual cause (issue 13's load test:
// 1 000 at once on 2 cores).
var busyMachine = func() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return loadNote(string(b), runtime.NumCPU())
}

// loadNote is busyMachine's note for a /proc/loadavg line on cpus CPUs: a
// 1-minute load above twice the CPUs is an overloaded machine.
func loadNote(loadavg string, cpus int) string {
	f := strings.Fields(loadavg)
	if len(f) == 0 || cpus <= 0 {
		return ""
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil || load <= 2*float64(cpus) {
		return ""
	}
	return fmt.Sprintf("; the machine was overloaded (load average %.1f on %d CPUs): start fewer agents at a time, or give them a longer --ready-timeout", load, cpus)
}
