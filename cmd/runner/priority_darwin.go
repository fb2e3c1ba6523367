package main

import "syscall"

// From macOS's sys/resource.h (not in x/sys): the process-wide darwin
// priority class, and its background band.
const (
	prioDarwinProcess = 4
	prioDarwinBG      = 0x1000
)

// lowerPriority puts this process in the background band (low CPU and
// I/O priority, as a Time Machine backup runs), and at nice 19. Best
// effort.
func lowerPriority() {
	_ = syscall.Setpriority(prioDarwinProcess, 0, prioDarwinBG)
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, 19)
}
