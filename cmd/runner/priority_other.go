//go:build !linux && !darwin

package main

import "syscall"

// lowerPriority runs this process at nice 19 (best effort).
func lowerPriority() { _ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, 19) }
