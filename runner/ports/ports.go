// Package ports gives each task its range of TCP ports (RUNNER_PORT,
// RUNNER_PORT_COUNT in its pane), so parallel dev servers and test
// databases do not collide: from the config's base and count, recorded
// in the state with the task (state.AllocatePorts), a range with a port a
// listener holds on this machine passed over.
package ports

import (
	"github.com/runner-cli/runner/internal/portprobe"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/state"
)

// Allocate gives task (inside the Update that records it) its range
// of ports from the config's (its defaults when unset); on this machine, a
// range with a port a listener holds now is passed over. On a host only
// the tasks recorded there count: nothing is probed there.
func Allocate(s *state.State, task *state.Task, p config.Ports) error {
	base, count := Range(p)
	busy := inUse
	if !Probed(task) {
		busy = nil
	}
	return s.AllocatePorts(task, base, count, busy)
}

// Range is the base and count of the config's ports, their defaults
// where unset.
func Range(p config.Ports) (base, count int) {
	if p.Base == 0 {
		p.Base = config.DefaultPortBase
	}
	if p.Count == 0 {
		p.Count = config.DefaultPortCount
	}
	return p.Base, p.Count
}

// Probed reports whether task's range of ports is probed for ports in
// use: on this machine, not on a host.
func Probed(task *state.Task) bool { return task.Tmux.Host == "" }

// inUse is portprobe.InUse (tests swap it).
var inUse = portprobe.InUse

// Keep keeps the range of task, started again after it ended, unless
// another live task was given it meanwhile: then it gets the next free one.
func Keep(s *state.State, task *state.Task) error {
	if task.Ports.IsZero() || !s.PortsHeld(task) {
		return nil
	}
	return Allocate(s, task, config.Ports{Base: task.Ports.First, Count: task.Ports.Count})
}
