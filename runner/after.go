package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/settings"

	"github.com/runner-cli/runner/state"
)

// Ordering (dispatch --after): a task with dependencies is created queued,
// with the dependency ids in state.Task.After, and stays queued (no
// snapshot, no pane) until every dependency is done. Whoever supervises it
// (the foreground dispatch, or the detached supervisor) waits on the state
// directory, then starts it like any task: the snapshot is taken at that
// moment, after the dependencies changed the code. A dependency that ends
// failed, timeout, cancelled or exited cancels the task with the reason.
// An orphaned dependency is not finished (it can be resumed): the task
// keeps waiting. A supervisor stopped while waiting leaves the task
// orphaned; 'runner resume' waits on.

// resolveAfter turns --after references (ids or unique prefixes, each
// value possibly a comma-separated list) into task ids, in order, without
// duplicates. An unknown or ambiguous reference is bad input.
func resolveAfter(st *state.State, refs []string) ([]string, error) {
	var ids []string
	for _, v := range refs {
		for _, ref := range strings.Split(v, ",") {
			ref = strings.TrimSpace(ref)
			if ref == "" {
				return nil, exit.Usagef("--after %q: an empty task reference (give ids separated by commas, e.g. --after t_abc,t_def)", v)
			}
			t, err := st.FindTask(ref)
			if err != nil {
				return nil, exit.Usagef("--after %s: %v (see 'runner ps --all')", ref, err)
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

// Is makes errors.Is(err, ErrCancelled) true: the dependent is cancelled.
func (e *DependencyError) Is(target error) bool { return target == ErrCancelled }

// checkDependencies says whether a task waiting for after can start: ready
// when every dependency is done; a *DependencyError for the first one (in
// the order given) that ended otherwise or is gone; else it waits.
func checkDependencies(st *state.State, after []string) (ready bool, err error) {
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

// errLeftQueue says the task stopped being queued while it waited (a user
// cancelled it).
type errLeftQueue struct{ t *state.Task }

func (e *errLeftQueue) Error() string {
	return fmt.Sprintf("task %s is %s (%s)", e.t.ID, e.t.Status, e.t.LastReason())
}

func (e *errLeftQueue) Is(target error) bool { return target == ErrCancelled }

// waitDependencies blocks until every dependency of the queued task id is
// done (nil), one ended otherwise (*DependencyError), the task left the
// queue (*errLeftQueue), or ctx ends. It watches the state directory and
// reconciles now and then, so a dependency whose supervisor died is seen.
func waitDependencies(ctx context.Context, env *Env, id string) error {
	changes, err := env.Store.Watch(ctx)
	if err != nil {
		return err
	}
	st, err := env.Store.Read(ctx)
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
			return &errLeftQueue{t}
		}
		ready, err := checkDependencies(st, t.After)
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
			st, err = env.Store.Read(ctx)
		case <-safety.C:
			st, err = Reconcile(ctx, env)
		}
		if err != nil {
			return err
		}
	}
}

// startQueued waits for a queued task's dependencies, takes the project
// lock if the task is exclusive, and starts it (snapshot, pane). The
// returned func releases the lock (nil when none was taken). A dependency
// that did not end done cancels the task; an interruption leaves it
// orphaned (detached supervisor) or cancelled (foreground).
func startQueued(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile, set settings.Run) (func(), error) {
	if len(t.After) > 0 {
		env.Say("task %s: %s", t.ID, reconcile.WaitingReason(t.After))
	}
	err := waitDependencies(ctx, env, t.ID)
	var dep *DependencyError
	var left *errLeftQueue
	switch {
	case err == nil:
	case errors.As(err, &dep):
		bg := context.WithoutCancel(ctx)
		_ = env.Record().Finish(bg, t.ID, state.StatusCancelled, dep.Error(), nil)
		if nt, _ := env.Record().Task(bg, t.ID); nt != nil {
			Notify(bg, env, nt, set)
		}
		return nil, fmt.Errorf("task %s cancelled: %w", t.ID, err)
	case errors.As(err, &left):
		return nil, fmt.Errorf("task %s will not start: %w", t.ID, err)
	case ctx.Err() != nil:
		bg := context.WithoutCancel(ctx)
		if nt, _ := env.Record().Task(bg, t.ID); nt != nil && nt.Status.IsTerminal() {
			// Ended by another process (runner cancel), which stopped us.
			return nil, fmt.Errorf("task %s ended while waiting: %s (%s): %w", t.ID, nt.Status, nt.LastReason(), ctx.Err())
		}
		if set.Detached {
			_ = env.Record().SetStatus(bg, t.ID, state.StatusOrphaned, fmt.Sprintf("supervisor stopped while %s (runner resume %s)", reconcile.WaitingReason(t.After), t.ID), nil)
		} else {
			_ = env.Record().Finish(bg, t.ID, state.StatusCancelled, "interrupted while "+reconcile.WaitingReason(t.After), nil)
		}
		return nil, fmt.Errorf("task %s interrupted while %s: %w", t.ID, reconcile.WaitingReason(t.After), ctx.Err())
	default:
		return nil, err
	}
	spec := set.Start
	if spec == nil {
		return nil, fmt.Errorf("task %s: its record has no start settings (it was queued by an older runner); dispatch it again", t.ID)
	}
	var unlock func()
	if spec.Exclusive {
		lock, err := env.Store.LockProject(ctx, lockKey(t.Project, t.Dir, t.Tmux.Host), spec.WaitLock)
		if err != nil {
			_ = env.Record().Finish(context.WithoutCancel(ctx), t.ID, state.StatusFailed, "project lock: "+err.Error(), nil)
			return nil, err
		}
		unlock = lock.Unlock
	}
	if len(t.After) > 0 {
		env.Record().Journal(ctx, t, "start", "dependencies done: "+strings.Join(t.After, ", "))
	}
	if err := start(ctx, env, t, prof, spec); err != nil {
		if unlock != nil {
			unlock()
		}
		return nil, err
	}
	return unlock, nil
}
