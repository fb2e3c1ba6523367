// Package portprobe tells whether a TCP port of this machine is in use
// (a listener holds it): what a task's range of ports (package ports,
// and the holder of the state's lock that records a new task for
// another process, state.Store.PortBusy) must not contain.
package portprobe

import (
	"net"
	"strconv"
	"syscall"
)

// InUse reports whether a process listens on TCP port p of this
// machine now (on any address): binding it on every address fails then.
// It is net.Listen("tcp", ":p") in six system calls (a dispatch probes
// a range of ten under the state's lock: the net package's listener,
// with its poller, took four times as long, issue 51): one dual-stack
// socket, SO_REUSEADDR, bind and listen. A system without one (no IPv6,
// or IPv6 only) is probed with net.Listen.
func InUse(p int) bool {
	syscall.ForkLock.RLock() // close-on-exec before any fork sees it
	fd, err := syscall.Socket(syscall.AF_INET6, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return listenFails(p)
	}
	defer syscall.Close(fd)
	if syscall.SetsockoptInt(fd, syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 0) != nil {
		return listenFails(p)
	}
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	if syscall.Bind(fd, &syscall.SockaddrInet6{Port: p}) != nil {
		return true
	}
	return syscall.Listen(fd, 1) != nil
}

// listenFails is inUse through the net package.
func listenFails(p int) bool {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
	if err != nil {
		return true
	}
	_ = l.Close()
	return false
}
