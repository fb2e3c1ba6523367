// Package deps holds the rules of ordering (dispatch --after): a task
// with dependencies is created queued, with the dependency ids in
// state.Task.After, and stays queued (no snapshot, no pane) until every
// dependency is done. Whoever supervises it
// (the foreground dispatch, or the detached supervisor) waits on the state
// directory, then starts it like any task: the snapshot is taken at that
// moment, after the dependencies changed the code. A dependency that ends
// failed, timeout, cancelled or exited cancels the task with the reason.
// An orphaned dependency is not finished (it can be resumed): the task
// keeps waiting. A supervisor stopped while waiting leaves the task
// orphaned; 'runner resume' waits on. Resolve reads the --after
// references, Check says whether a task can start, and Wait waits on the
// state directory through a Watcher until it can.
package deps

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/supervisor"
	"github.com/runner-cli/runner/state"
)

// Resolve turns --after references (ids or unique prefixes, each
// value possibly a comma-separated list) into task ids, in order, without
// duplicates. An unknown or ambiguous reference is bad input.
func Resolve(st *state.State, refs []string) ([]string, error) {
	var ids []string
	for _, v := range refs {
		for _, ref := range strings.Split(v, ",") {
			ref = strings.TrimSpace(ref)
			if ref == "" {
				return nil, fault.Usagef("--after %q: an empty task reference (give ids separated by commas, e.g. --after t_abc,t_def)", v)
			}
			t, err := st.FindTask(ref)
			if err != nil {
				return nil, fault.Usagef("--after %s: %v (see 'runner ps --all')", ref, err)
			}
			if !slices.Contains(ids, t.ID) {
				ids = append(ids, t.ID)
			}
		}
	}
	return ids, nil
}

// DependencyError says a dependency of a queued task ended without being
// done, so the task will not run.
type DependencyError struct {
	Task   string       // the dependency
	Status state.Status // how it ended; "" when it is no longer in the state
}

func (e *DependencyError) Error() string {
	switch e.Status {
	case "":
		return "dependency " + e.Task + " is no longer in the state (pruned)"
	case state.StatusFailed:
		return "dependency " + e.Task + " failed"
	case state.StatusTimeout:
		return "dependency " + e.Task + " timed out"
	case state.StatusCancelled:
		return "dependency " + e.Task + " was cancelled"
	case state.StatusExited:
		return "dependency " + e.Task + " exited"
	}
	return "dependency " + e.Task + " ended " + string(e.Status)
}

// Is makes errors.Is(err, supervisor.ErrCancelled) true: the dependent
// is cancelled.
func (e *DependencyError) Is(target error) bool { return target == supervisor.ErrCancelled }

// Check says whether a task waiting for after can start: ready
// when every dependency is done; a *DependencyError for the first one (in
// the order given) that ended otherwise or is gone; else it waits.
func Check(st *state.State, after []string) (ready bool, err error) {
	ready = true
	for _, id := range after {
		d := st.Task(id)
		switch {
		case d == nil:
			return false, &DependencyError{Task: id}
		case d.Status == state.StatusDone:
		case d.Status.IsTerminal():
			return false, &DependencyError{Task: id, Status: d.Status}
		default:
			// Active, waiting for input or orphaned: not finished.
			ready = false
		}
	}
	return ready, nil
}

// LeftQueueError says a task stopped being queued while it waited for its
// dependencies (a user cancelled it). errors.Is(err,
// supervisor.ErrCancelled) is true of it.
type LeftQueueError struct{ Task *state.Task }

func (e *LeftQueueError) Error() string {
	return fmt.Sprintf("task %s is %s (%s)", e.Task.ID, e.Task.Status, e.Task.LastReason())
}

// Is makes errors.Is(err, supervisor.ErrCancelled) true.
func (e *LeftQueueError) Is(target error) bool { return target == supervisor.ErrCancelled }

// Watcher is what Wait reads the state with: a signal on each change of the
// state directory, the state, and the state reconciled (a dependency whose
// supervisor died seen as such).
type Watcher struct {
	Watch     func(ctx context.Context) (<-chan struct{}, error)
	Read      func(ctx context.Context) (*state.State, error)
	Reconcile func(ctx context.Context) (*state.State, error)
}

// Wait blocks until every dependency of the queued task id is done (nil),
// one ended otherwise (*DependencyError), the task left the queue
// (*LeftQueueError), or ctx ends. It reads the state on each change and
// reconciles every few seconds.
func Wait(ctx context.Context, w Watcher, id string) error {
	changes, err := w.Watch(ctx)
	if err != nil {
		return err
	}
	st, err := w.Read(ctx)
	if err != nil {
		return err
	}
	safety := time.NewTicker(5 * time.Second)
	defer safety.Stop()
	for {
		t := st.Task(id)
		if t == nil {
			return fmt.Errorf("task %s: %w", id, state.ErrTaskNotFound)
		}
		if t.Status != state.StatusQueued {
			return &LeftQueueError{Task: t}
		}
		ready, err := Check(st, t.After)
		if err != nil || ready {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case _, ok := <-changes:
			if !ok {
				return ctx.Err()
			}
			st, err = w.Read(ctx)
		case <-safety.C:
			st, err = w.Reconcile(ctx)
		}
		if err != nil {
			return err
		}
	}
}
