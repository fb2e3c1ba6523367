//go:build darwin || freebsd

package monitor

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// exitNotify returns a channel closed when process pid exits (a zombie
// counts), through a kqueue EVFILT_PROC NOTE_EXIT filter: a goroutine
// sleeps in kevent(2) until then, nothing polls. stop ends the watch (a
// user event wakes that kevent). ok is false when pid is gone already or
// the kqueue cannot be made; the caller then checks liveness its own way.
func exitNotify(pid int) (exited <-chan struct{}, stop func(), ok bool) {
	if pid <= 0 {
		return nil, nil, false
	}
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, nil, false
	}
	unix.CloseOnExec(kq)
	changes := make([]unix.Kevent_t, 2)
	unix.SetKevent(&changes[0], pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	changes[0].Fflags = unix.NOTE_EXIT
	unix.SetKevent(&changes[1], 0, unix.EVFILT_USER, unix.EV_ADD|unix.EV_CLEAR)
	if _, err := unix.Kevent(kq, changes, nil, nil); err != nil {
		unix.Close(kq) // ESRCH: gone already
		return nil, nil, false
	}
	ch := make(chan struct{})
	var mu sync.Mutex
	closed := false
	go func() {
		defer func() {
			mu.Lock()
			closed = true
			unix.Close(kq)
			mu.Unlock()
		}()
		ev := make([]unix.Kevent_t, 1)
		for {
			n, err := unix.Kevent(kq, nil, ev, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err == nil && n == 1 && ev[0].Filter == unix.EVFILT_PROC {
				close(ch)
			}
			return
		}
	}()
	stop = func() {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return // the process exited, or stop ran: kq is no longer ours
		}
		var wake unix.Kevent_t
		unix.SetKevent(&wake, 0, unix.EVFILT_USER, 0)
		wake.Fflags = unix.NOTE_TRIGGER
		_, _ = unix.Kevent(kq, []unix.Kevent_t{wake}, nil, nil)
	}
	return ch, stop, true
}
