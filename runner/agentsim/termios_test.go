//go:build unix

package agentsim

import (
	"syscall"
	"unsafe"
)

// getTermios reads the terminal attributes of fd (the tests compare them
// before and after the sim ran).
func getTermios(fd uintptr) (*syscall.Termios, error) {
	var t syscall.Termios
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(ioctlGetTermios), uintptr(unsafe.Pointer(&t))); errno != 0 {
		return nil, errno
	}
	return &t, nil
}
