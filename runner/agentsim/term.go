//go:build unix

package agentsim

import (
	"fmt"
	"syscall"
	"unsafe"
)

// getTermios reads the terminal attributes of fd.
func getTermios(fd uintptr) (*syscall.Termios, error) {
	var t syscall.Termios
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(ioctlGetTermios), uintptr(unsafe.Pointer(&t))); errno != 0 {
		return nil, errno
	}
	return &t, nil
}

// setTermios sets the terminal attributes of fd.
func setTermios(fd uintptr, t *syscall.Termios) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(ioctlSetTermios), uintptr(unsafe.Pointer(t))); errno != 0 {
		return errno
	}
	return nil
}

// makeRaw puts fd into raw mode like cfmakeraw(3) and returns the previous
// attributes, to be given back to setTermios on exit.
func makeRaw(fd uintptr) (*syscall.Termios, error) {
	old, err := getTermios(fd)
	if err != nil {
		return nil, fmt.Errorf("read terminal attributes: %w", err)
	}
	raw := *old
	raw.Iflag &^= syscall.IGNBRK | syscall.BRKINT | syscall.PARMRK | syscall.ISTRIP | syscall.INLCR | syscall.IGNCR | syscall.ICRNL | syscall.IXON
	raw.Oflag &^= syscall.OPOST
	raw.Lflag &^= syscall.ECHO | syscall.ECHONL | syscall.ICANON | syscall.ISIG | syscall.IEXTEN
	raw.Cflag &^= syscall.CSIZE | syscall.PARENB
	raw.Cflag |= syscall.CS8
	raw.Cc[syscall.VMIN] = 1
	raw.Cc[syscall.VTIME] = 0
	if err := setTermios(fd, &raw); err != nil {
		return nil, fmt.Errorf("set terminal to raw mode: %w", err)
	}
	return old, nil
}

// winsize mirrors struct winsize of <sys/ioctl.h>.
type winsize struct {
	Row, Col, Xpixel, Ypixel uint16
}

// termSize returns the terminal's columns and rows, falling back to 80x24
// when the size is unknown (a pty nobody sized reports 0x0).
func termSize(fd uintptr) (cols, rows int) {
	var ws winsize
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	cols, rows = int(ws.Col), int(ws.Row)
	if errno != 0 || cols <= 0 || rows <= 0 {
		return 80, 24
	}
	return cols, rows
}
