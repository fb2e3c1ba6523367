// A bound, across all processes of this machine, on the agent start-ups
// being watched at once.

package runner

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/filelock"
	"github.com/runner-cli/runner/internal/privdir"
	"github.com/runner-cli/runner/state"
)

// StartSlots is how many agents' start-ups the supervisors of this machine
// watch at once, all processes together: twice the CPUs, at least 4. A
// supervisor waits for a slot before its ready wait, and the ready time
// (--ready-timeout) counts from the slot. Many agents dispatched at once
// thus come up in waves, each wave with the machine to itself, rather than
// all starving each other until their ready time runs out (1 000 at once on
// 2 cores: 263 of them did, before).
var StartSlots = max(4, 2*runtime.NumCPU())

// startSlot takes one of the machine's StartSlots: an flock in a private
// directory ($XDG_RUNTIME_DIR/runner-start, else $TMPDIR/runner-start-UID,
// see privdir). It waits for ctx only. If no private directory can be had,
// start-ups go unbounded (release is then a no-op; privdir says so once).
func startSlot(ctx context.Context, env *Env, id string) (release func(), err error) {
	dir, err := privdir.Dir("start")
	if err != nil {
		return func() {}, nil
	}
	start := clock.Now()
	release, err = filelock.Slot(ctx, dir, StartSlots)
	if err != nil {
		return nil, fmt.Errorf("task %s: waiting for a start slot: %w", id, err)
	}
	if waited := clock.Since(start); waited > time.Second {
		env.Say("task %s: waited %s for a start slot (%d agents start at once on this machine)", id, waited.Round(time.Second), StartSlots)
	}
	return release, nil
}

// waitReady waits, within a start slot, until the agent shows its prompt
// (supervisor.WaitReady).
func (s *supervision) waitReady(ctx context.Context) error {
	release, err := startSlot(ctx, s.env, s.ID)
	if err != nil {
		return err
	}
	defer release()
	if s.started == nil {
		return s.WaitReady(ctx)
	}
	return s.waitReadyStarting(ctx)
}

// waitReadyStarting is the ready wait of an agent launched beside its
// snapshot: the start is finished (the snapshot taken, the task recorded
// starting: launch.Started) while the agent starts, and the wait records
// nothing nor types into the pane before it is (Supervisor's Started). An
// agent found simply ready before the start was recorded has its start
// recorded by its first delivery's write instead, with its ready status
// (Supervisor's StartChange): whichever comes first, the snapshot taken
// or the agent found ready, decides. A start that fails ends the wait
// with its error.
func (s *supervision) waitReadyStarting(ctx context.Context) error {
	st := s.started
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	by := "" // who records the start: "write" (here) or "fold" (the delivery)
	claim := func(who string) bool {
		mu.Lock()
		defer mu.Unlock()
		if by == "" {
			by = who
		}
		return by == who
	}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-st.Snapped():
		case <-rctx.Done():
			return
		}
		if claim("write") && st.Finish(ctx) != nil {
			cancel()
		}
	}()
	s.Started = func(ctx context.Context) error {
		select {
		case <-finished:
		case <-ctx.Done():
			return ctx.Err()
		}
		return st.Finish(ctx)
	}
	s.StartChange = func(ctx context.Context) (func(*state.Task) error, func(), error) {
		if !claim("fold") {
			return nil, nil, s.Started(ctx)
		}
		change, err := st.Change(ctx)
		return change, st.Recorded, err
	}
	err := s.WaitReady(rctx)
	cancel()
	<-finished
	s.Started, s.StartChange = nil, nil
	if _, ferr := st.Change(ctx); ferr != nil {
		return ferr
	}
	// A start claimed by the delivery's first write is left to it (or, if
	// that is never made, to supervise's Finish).
	if claim("write") {
		if ferr := st.Finish(ctx); ferr != nil {
			return ferr
		}
	}
	// The snapshot is known now: the changes are tracked from it.
	s.stopTrack()
	s.stopTrack = s.trackWhileWorking(s.runCtx, &state.Task{SnapshotRef: st.SnapshotRef})
	return err
}
