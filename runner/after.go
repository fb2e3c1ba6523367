package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/runner/deps"
	"github.com/runner-cli/runner/runner/placement"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/projlock"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/settings"

	"github.com/runner-cli/runner/state"
)

// Ordering (dispatch --after; its rules: package deps): whoever
// supervises a queued task (the foreground dispatch, or the detached
// supervisor) waits on the state directory, then starts it like any task.

// startQueued waits for a queued task's dependencies, takes the project
// lock if the task is exclusive, and starts it (snapshot, pane). The
// returned func releases the lock (nil when none was taken). A dependency
// that did not end done cancels the task; an interruption leaves it
// orphaned (detached supervisor) or cancelled (foreground).
func startQueued(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile, set settings.Run) (func(), error) {
	if len(t.After) > 0 {
		env.Say("task %s: %s", t.ID, reconcile.WaitingReason(t.After))
	}
	err := deps.Wait(ctx, deps.Watcher{Watch: env.Store.Watch, Read: env.Store.Read,
		Reconcile: func(ctx context.Context) (*state.State, error) { return Reconcile(ctx, env) }}, t.ID)
	var dep *deps.DependencyError
	var left *deps.LeftQueueError
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
	if t.Tmux.Pool != "" && t.Tmux.Host == "" {
		if t, spec, err = placeOnPool(ctx, env, t, prof, set); err != nil {
			return nil, err
		}
	}
	if spec == nil {
		return nil, fmt.Errorf("task %s: its record has no start settings (it was queued by an older runner); dispatch it again", t.ID)
	}
	var unlock func()
	if spec.Exclusive {
		lock, err := projlock.Take(ctx, env.Store, projects.LockKey(t.Project, t.Dir, t.Tmux.Host), spec.WaitLock)
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
		if nt := placement.Requeued(ctx, env.Record(), t.ID); nt != nil {
			return startQueued(ctx, env, nt, prof, set) // its host went: another of its pool
		}
		return nil, err
	}
	return unlock, nil
}
