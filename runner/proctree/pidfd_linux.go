package proctree

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// pidfdOpen opens a pidfd on pid (Linux 5.3+).
func pidfdOpen(pid int) (int, error) { return unix.PidfdOpen(pid, 0) }

// pidfdSignal sends sig through a pidfd.
func pidfdSignal(fd int, sig syscall.Signal) error { return unix.PidfdSendSignal(fd, sig, nil, 0) }

func closeFD(fd int) { unix.Close(fd) }
