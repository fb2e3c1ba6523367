//go:build !linux

package proctree

import "syscall"

// pidfdOpen: no pidfds here (signals go by pid, checked against the
// process's start time first).
func pidfdOpen(int) (int, error) { return -1, syscall.ENOSYS }

func pidfdSignal(int, syscall.Signal) error { return syscall.ENOSYS }

func closeFD(int) {}
