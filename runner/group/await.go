package group

import (
	"context"
	"time"

	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/state"
)

// SupervisorAlive reports whether the process recorded as g's supervisor
// still runs: its pid, with the identity recorded beside it
// (proctree.AliveAs: a reused pid is not it). d.Alive replaces the check
// when set.
func SupervisorAlive(d Deps, g *state.Group) bool {
	if g.SupervisorPID <= 0 {
		return false
	}
	if d.Alive != nil {
		return d.Alive(g.SupervisorPID, g.SupervisorStart)
	}
	return proctree.AliveAs(g.SupervisorPID, g.SupervisorStart)
}

// Await waits until group id has ended (`runner wait GROUP`) and returns
// it with its candidates' records. When its supervisor is gone (killed,
// the machine restarted) and takeOver is set, Await sees the group
// through itself (Supervise), saying so; a wait asked through a
// sandboxed task's door gives false: it would run the group's checks for
// it. It wakes on each change of the state, and every 2 s; ctx's end is
// the error.
func Await(ctx context.Context, d Deps, id string, takeOver bool) (*state.Group, map[string]*state.Task, error) {
	g, err := d.Store.FindGroup(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	var changes <-chan struct{}
	if g.Ended.IsZero() {
		// Watched only when there is something to wait for (a watch's
		// inotify instance holds the process's exit), and read again once
		// the watch is set: an end in between is not missed.
		if changes, err = d.Store.Watch(ctx); err != nil {
			return nil, nil, err
		}
		if g, err = d.Store.FindGroup(ctx, g.ID); err != nil {
			return nil, nil, err
		}
	}
	for g.Ended.IsZero() {
		if takeOver && !SupervisorAlive(d, g) {
			d.Say("group %s: its supervisor is gone; seeing it through here", g.ID)
			return Supervise(ctx, d, g.ID)
		}
		select {
		case <-ctx.Done():
			return g, nil, ctx.Err()
		case <-changes:
		case <-time.After(2 * time.Second):
		}
		if g, err = d.Store.FindGroup(ctx, g.ID); err != nil {
			return nil, nil, err
		}
	}
	tasks := map[string]*state.Task{}
	for _, tid := range g.Tasks {
		if t, err := d.Tasks.Task(ctx, tid); err == nil {
			tasks[tid] = t
		}
	}
	return g, tasks, nil
}

// CancelAtWork cancels group id's candidates still at work (a foreground
// group interrupted), with reason; what fails is said.
func CancelAtWork(ctx context.Context, d Deps, id, reason string) {
	g, err := d.Store.FindGroup(ctx, id)
	if err != nil {
		return
	}
	for _, tid := range g.Tasks {
		if t, err := d.Tasks.Task(ctx, tid); err == nil && !Ended(t) {
			if err := d.Tasks.Cancel(ctx, tid, reason); err != nil {
				d.Say("group %s: cancel %s: %v", id, tid, err)
			}
		}
	}
}
