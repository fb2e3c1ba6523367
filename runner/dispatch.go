package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/runner-cli/runner/runner/breadth"
	"github.com/runner-cli/runner/runner/deps"
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/runner/ports"
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
	if err := start(ctx, env, task, p.Profile, p.Settings.Start); err != nil {
		failUnstarted(ctx, env, task.ID, err)
		return task, err
	}
	if !p.Settings.Detached {
		err = supervise(ctx, env, task.ID, &given{prof: p.Profile, set: p.Settings, early: early, lock: lock})
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
// process (a reconcile that finds this process gone before a supervisor
// takes it fails the task, or, waiting for others, orphans it), and says
// so. A long text goes to its own file, named after the task, before the
// record points at it.
func recordTask(ctx context.Context, env *Env, p *plan.Plan) (*state.Task, error) {
	tmux := state.TmuxTarget{Socket: env.TC.Socket(), Session: projects.SessionName(p.Project, p.Dir), Host: p.Host, Pool: p.Pool}
	if p.Host != "" {
		c, err := env.HostConn(ctx, p.Host)
		if err != nil {
			return nil, err
		}
		tmux.Socket = c.TC().Socket()
	}
	settings, _ := json.Marshal(p.Settings)
	now := env.Time()
	newID := state.RandomTaskID()
	text, textFile, err := env.Store.RecordText(newID, p.Req.Text)
	if err != nil {
		return nil, err
	}
	var task *state.Task
	// The index, not every task's record: breadth, ports and lineage read
	// hot fields only, so the write does not grow with the active tasks.
	err = env.Record().UpdateIndexDurably(ctx, "dispatch: record the task", func(s *state.State) error {
		id := newID
		if s.Task(id) != nil {
			if textFile != "" {
				return fmt.Errorf("task id %s is taken (a one in 10^12 chance): dispatch again", id)
			}
			id = s.NewTaskID()
		}
		if err := breadth.Check(s, p.Parent, p.Req.Tree, now); err != nil {
			return err
		}
		tmux.Window = id
		task = &state.Task{ID: id, Project: p.Project, Dir: p.Dir, Agent: p.Profile.Name, Text: text, TextFile: textFile,
			Parent: p.Parent, Level: p.Level, Source: p.Source, Created: now, Settings: settings, After: p.After,
			Tmux: tmux, Group: p.Req.Group,
			Transcript: env.Store.TaskFile(state.FileLog, id)}
		reason := "dispatched by " + p.Source
		if len(p.After) > 0 {
			reason = reconcile.WaitingReason(p.After)
		}
		task.SupervisorPID, task.SupervisorStart = os.Getpid(), reconcile.SelfIdentity()
		if err := ports.Allocate(s, task, p.Policy.Ports); err != nil {
			return err
		}
		_ = task.SetStatus(state.StatusQueued, now, reason)
		s.Tasks[id] = task
		return nil
	})
	if err != nil {
		if textFile != "" {
			os.Remove(textFile)
		}
		return nil, err
	}
	env.Record().Journal(ctx, task, "dispatch", fmt.Sprintf("agent %s in %s: %s", p.Profile.Name, p.Dir, TaskTitle(p.Req.Text)))
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
