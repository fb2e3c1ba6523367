package runner

import (
	"context"
	"errors"
	"os"

	"github.com/runner-cli/runner/runner/deps"
	"github.com/runner-cli/runner/runner/enqueue"
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/runner/remote"

	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/projlock"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/runner/supervisor"

	"github.com/runner-cli/runner/state"
)

// DispatchRequest is one `runner dispatch`, as asked (plan.Request):
// Dispatch makes it a plan.Plan once, and reads only the plan after.
type DispatchRequest = plan.Request

// The errors a task's end wraps (package supervisor's), for commands and
// callers that map them to exit codes.
var (
	// ErrTaskFailed is wrapped by the error of a task that ended failed
	// or exited (exit 1).
	ErrTaskFailed = supervisor.ErrTaskFailed
	// ErrTaskTimeout is wrapped by the error of a task that timed out
	// (exit 3).
	ErrTaskTimeout = supervisor.ErrTaskTimeout
	// ErrCancelled is wrapped by the error of a cancelled task.
	ErrCancelled = supervisor.ErrCancelled
)

// Dispatch registers a task and runs it: in the foreground (the returned
// error says how it ended) or, with Settings.Detached, by starting a
// supervisor process and returning at once. A task with After waits queued
// for its dependencies (see startQueued), in this process or in the
// detached supervisor.
func Dispatch(ctx context.Context, env *Env, req DispatchRequest) (*state.Task, error) {
	p, err := planDispatch(ctx, env, req)
	if err != nil {
		return nil, err
	}
	var lock *state.ProjectLock
	handedOff := false // the lock went to a detached supervisor
	if p.Req.Exclusive && len(p.After) == 0 {
		if lock, err = projlock.Take(ctx, env.Store, projects.LockKey(p.Project, p.Dir, p.Host), p.Req.WaitLock); err != nil {
			return nil, err
		}
		defer func() {
			if handedOff {
				// The supervisor shares the open lock file: an unlock here
				// would release its lock too. Only close this process's
				// descriptor.
				lock.File().Close()
				return
			}
			lock.Unlock()
		}()
	}
	task, err := recordTask(ctx, env, p)
	if err != nil {
		return nil, err
	}
	if len(p.After) > 0 || p.Pool != "" {
		return dispatchQueued(ctx, env, task)
	}
	var early *remote.Early
	if p.Host != "" && !p.Settings.Detached {
		// The stream of its files starts with the agent, not after.
		early = startEarlyMirror(ctx, env, task)
		defer early.Release()
	}
	if !p.Settings.Detached {
		// Started by its supervision here: the agent watched starting
		// while its snapshot is taken (beginHere).
		err = supervise(ctx, env, task.ID, &given{prof: p.Profile, set: p.Settings, early: early, lock: lock, begin: true})
	} else if err = start(ctx, env, task, p.Profile, p.Settings.Start); err != nil {
		failUnstarted(ctx, env, task.ID, err)
		return task, err
	} else {
		handedOff, err = detach(ctx, env, task, lock)
	}
	if t, _ := env.Record().Task(context.WithoutCancel(ctx), task.ID); t != nil {
		task = t
	}
	return task, err
}

// detach starts the task's supervisor in its own process, handing it the
// project lock when there is one (handedOff), or fails the task with why.
func detach(ctx context.Context, env *Env, task *state.Task, lock *state.ProjectLock) (handedOff bool, err error) {
	pid, err := env.StartSupervisor(task.ID, lock)
	if err != nil {
		_ = env.Record().Finish(context.WithoutCancel(ctx), task.ID, state.StatusFailed, "start supervisor: "+err.Error(), nil)
		return false, err
	}
	env.Say("task %s: supervisor %d started (runner status %s, runner attach %s)", task.ID, pid, task.ID, task.ID)
	return lock != nil, nil
}

// recordTask records the new task of plan p, queued and owned by this
// process (package enqueue), and says so.
func recordTask(ctx context.Context, env *Env, p *plan.Plan) (*state.Task, error) {
	w := enqueue.Where{Store: env.Store, Book: env.Record(), Now: env.Time, Socket: env.TC.Socket()}
	if p.Host != "" {
		c, err := env.Hosts.Conn(ctx, p.Host)
		if err != nil {
			return nil, err
		}
		w.Socket = c.TC().Socket()
	}
	task, err := enqueue.Task(ctx, p, w)
	if err != nil {
		return nil, err
	}
	if p.Host != "" {
		env.Say("task %s: %s in %s on host %s", task.ID, p.Profile.Name, p.Dir, p.Host)
	} else {
		env.Say("task %s: %s in %s", task.ID, p.Profile.Name, p.Dir)
	}
	return task, nil
}

// dispatchQueued hands a task that waits for dependencies to a detached
// supervisor, or waits and runs it here (Supervise starts a queued task).
func dispatchQueued(ctx context.Context, env *Env, task *state.Task) (*state.Task, error) {
	set, err := settings.Of(task)
	if err != nil {
		return task, err
	}
	if set.Detached {
		pid, err := env.StartSupervisor(task.ID, nil)
		if err != nil {
			_ = env.Record().Finish(context.WithoutCancel(ctx), task.ID, state.StatusFailed, "start supervisor: "+err.Error(), nil)
			return task, err
		}
		env.Say("task %s: %s; supervisor %d started (runner status %s)", task.ID, reconcile.QueuedReason(task), pid, task.ID)
		if t, _ := env.Record().Task(ctx, task.ID); t != nil {
			task = t
		}
		return task, nil
	}
	err = Supervise(ctx, env, task.ID, nil)
	if t, _ := env.Record().Task(context.WithoutCancel(ctx), task.ID); t != nil {
		task = t
	}
	return task, err
}

// failUnstarted records that a task this process recorded could not be
// started (err), unless it already ended (a cancel) or moved on: no task is
// left queued or starting with nothing behind it.
func failUnstarted(ctx context.Context, env *Env, id string, err error) {
	var left *deps.LeftQueueError
	if errors.As(err, &left) {
		return
	}
	_ = env.Record().UpdateDurably(context.WithoutCancel(ctx), "task "+id+": failed to start", func(st *state.State) error {
		t := st.Task(id)
		if t == nil || (t.Status != state.StatusQueued && t.Status != state.StatusStarting) || t.SupervisorPID != os.Getpid() {
			return nil
		}
		return t.SetStatus(state.StatusFailed, env.Time(), "could not start: "+err.Error())
	})
}
