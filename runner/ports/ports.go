// Package ports gives each task its range of TCP ports (RUNNER_PORT,
// RUNNER_PORT_COUNT in its pane), so parallel dev servers and test
// databases do not collide: from the config's base and count, recorded
// in the state with the task (state.AllocatePorts), a range with a port a
// listener holds on this machine passed over.
package ports

import (
	"net"
	"strconv"

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
var inUse = func(p int) bool {
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
