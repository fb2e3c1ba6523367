// Package ports gives each task its range of TCP ports (RUNNER_PORT,
// RUNNER_PORT_COUNT in its pane), so parallel dev servers and test
// databases do not collide: from the config's base and count, recorded
// in the state with the task (state.AllocatePorts), a range with a port a
// listener holds on this machine passed over.
package ports

import (
	"net"
	"strconv"
	"syscall"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/state"
)

// Allocate gives task (inside the Update that records it) its range
// of ports from the config's (its defaults when unset); on this machine, a
// range with a port a listener holds now is passed over. On a host only
// the tasks recorded there count: nothing is probed there.
func Allocate(s *state.State, task *state.Task, p config.Ports) error {
	if p.Base == 0 {
		p.Base = config.DefaultPortBase
	}
	if p.Count == 0 {
		p.Count = config.DefaultPortCount
	}
	busy := inUse
	if task.Tmux.Host != "" {
		busy = nil
	}
	return s.AllocatePorts(task, p.Base, p.Count, busy)
}

// inUse reports whether a process listens on TCP port p of this
// machine now (on any address): binding it on every address fails then.
// It is net.Listen("tcp", ":p") in six system calls (a dispatch probes
// a range of ten under the state's lock: the net package's listener,
// with its poller, took four times as long, issue 51): one dual-stack
// socket, SO_REUSEADDR, bind and listen. A system without one (no IPv6,
// or IPv6 only) is probed with net.Listen.
var inUse = func(p int) bool {
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

// Keep keeps the range of task, started again after it ended, unless
// another live task was given it meanwhile: then it gets the next free one.
func Keep(s *state.State, task *state.Task) error {
	if task.Ports.IsZero() || !s.PortsHeld(task) {
		return nil
	}
	return Allocate(s, task, config.Ports{Base: task.Ports.First, Count: task.Ports.Count})
}
