//go:build linux

package monitor

import (
	"os"

	"golang.org/x/sys/unix"
)

// exitNotify returns a channel closed when process pid exits (a zombie
// counts), through a pidfd that the Go runtime's poller watches: nothing
// wakes up until then. stop releases the pidfd. ok is false when the kernel
// has no pidfd_open (before 5.3) or pid is gone already; the caller then
// checks liveness its own way.
func exitNotify(pid int) (exited <-chan struct{}, stop func(), ok bool) {
	if pid <= 0 {
		return nil, nil, false
	}
	fd, err := unix.PidfdOpen(pid, unix.O_NONBLOCK) // PIDFD_NONBLOCK is O_NONBLOCK
	if err != nil {
		return nil, nil, false
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, nil, false
	}
	ch := make(chan struct{})
	go func() {
		// Read calls the function, and again each time the poller says
		// the pidfd is readable, until it returns true; Close ends it
		// with an error.
		err := rc.Read(func(fd uintptr) bool {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, _ := unix.Poll(p, 0)
			return n > 0
		})
		if err == nil {
			close(ch)
		}
	}()
	return ch, func() { f.Close() }, true
}
