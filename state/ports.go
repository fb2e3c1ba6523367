package state

import (
	"errors"
	"fmt"
)

// PortRange is a range of TCP ports: First, First+1, … First+Count-1.
type PortRange struct {
	First int `json:"first"`
	Count int `json:"count"`
}

// IsZero reports whether r is no range.
func (r PortRange) IsZero() bool { return r.Count == 0 }

// Last is the range's last port.
func (r PortRange) Last() int { return r.First + r.Count - 1 }

// overlaps reports whether r and o share a port.
func (r PortRange) overlaps(o PortRange) bool {
	return !r.IsZero() && !o.IsZero() && r.First <= o.Last() && o.First <= r.Last()
}

// PortsHeld reports whether t's range overlaps one another live task of
// its machine holds (a task started again after it ended, whose range was
// given to another meanwhile).
func (s *State) PortsHeld(t *Task) bool { return s.held(t, t.Ports) }

// held reports whether r overlaps the range of a task of t's machine,
// other than t, that has not ended.
func (s *State) held(t *Task, r PortRange) bool {
	for _, o := range s.Tasks {
		if o.ID != t.ID && o.Tmux.Host == t.Tmux.Host && !o.Status.IsTerminal() && r.overlaps(o.Ports) {
			return true
		}
	}
	return false
}

// ErrNoPorts is wrapped when no range is free.
var ErrNoPorts = errors.New("no free range of ports")

// AllocatePorts gives task t (in s or about to be) a range of count ports
// on its machine (t.Tmux.Host): the first of base, base+count,
// base+2·count … (up to port 65535) that overlaps no range of another
// task of that machine that has not ended, and in which busy (nil: none)
// finds no port in use right now. Called inside Update, so two tasks
// dispatched at once never get the same range; a task that has ended
// frees its range for the next. An error wraps ErrNoPorts.
func (s *State) AllocatePorts(t *Task, base, count int, busy func(port int) bool) error {
	if count < 1 || base < 1 || base+count-1 > 65535 {
		return fmt.Errorf("ports from %d, %d a task: %w (the config's ports: base 1…65535, count at least 1)", base, count, ErrNoPorts)
	}
next:
	for first := base; first+count-1 <= 65535; first += count {
		r := PortRange{First: first, Count: count}
		if s.held(t, r) {
			continue
		}
		if busy != nil {
			for p := first; p <= r.Last(); p++ {
				if busy(p) {
					continue next
				}
			}
		}
		t.Ports = r
		return nil
	}
	return fmt.Errorf("ports from %d, %d a task, on %s: %w (every range is held by a live task or in use; end some, or set the config's ports.base)", base, count, machineName(t.Tmux.Host), ErrNoPorts)
}

// machineName names a task's machine in a message.
func machineName(host string) string {
	if host == "" {
		return "this machine"
	}
	return "host " + host
}
