package state

import (
	"context"
	"errors"
	"sync"
	"time"
)

// writerGates queues, inside this process, the writers of each state
// directory in front of the flock, so at most one thread per process waits
// in flock(2) and each unlock wakes one waiter of this process, not all of
// them.
//
// It is package-level on purpose, the one piece of shared mutable state in
// this package: the flock it fronts is shared by every Store of the
// directory in the process, so the queue must be as wide as the process.
// It is self-contained (its own mutex, no configuration), keyed by the
// store's absolute directory, and holds an entry only while someone is
// inside or waiting, so it is empty between updates and tests cannot leak
// into each other through it. Correctness does not depend on it: the flock
// still serialises everyone (two paths naming one directory through a
// symbolic link just queue separately).
var writerGates = &gates{m: map[string]*gate{}}

type gates struct {
	mu sync.Mutex
	m  map[string]*gate
}

// gate is a one-slot semaphore; blocked senders are served in order.
type gate struct {
	slot chan struct{}
	refs int // holders and waiters
}

// enter waits for dir's gate, at most timeout or until ctx ends. On timeout
// it returns errGateTimeout. The returned function leaves the gate.
func (g *gates) enter(ctx context.Context, dir string, timeout time.Duration) (func(), error) {
	g.mu.Lock()
	e := g.m[dir]
	if e == nil {
		e = &gate{slot: make(chan struct{}, 1)}
		g.m[dir] = e
	}
	e.refs++
	g.mu.Unlock()
	drop := func() {
		g.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(g.m, dir)
		}
		g.mu.Unlock()
	}
	leave := func() {
		<-e.slot
		drop()
	}
	select {
	case e.slot <- struct{}{}:
		return leave, nil
	default:
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case e.slot <- struct{}{}:
		return leave, nil
	case <-timer.C:
		drop()
		return nil, errGateTimeout
	case <-ctx.Done():
		drop()
		return nil, ctx.Err()
	}
}

// errGateTimeout is turned into a BusyError by the caller, which knows the
// lock's path.
var errGateTimeout = errors.New("timed out waiting at the writer gate")
