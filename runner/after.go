package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/deps"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/settings"

	"github.com/runner-cli/runner/state"
)

// Ordering (dispatch --after; its rules: package deps): whoever
// supervises a queued task (the foreground dispatch, or the detached
// supervisor) waits on the state directory, then starts it like any task.

// errLeftQueue says the task stopped being queued while it waited (a user
// cancelled it).
type errLeftQueue struct{ t *state.Task }

func (e *errLeftQueue) Error() string {
	return fmt.Sprintf("task %s is %s (%s)", e.t.ID, e.t.Status, e.t.LastReason())
}

func (e *errLeftQueue) Is(target error) bool { return target == ErrCancelled }

// waitDependencies blocks until every dependency of the queued task id is
// done (nil), one ended otherwise (*deps.DependencyError), the task left the
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
		ready, err := deps.Check(st, t.After)
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
	var dep *deps.DependencyError
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
