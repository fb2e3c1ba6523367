package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/runner-cli/runner/runner/breadth"
	"github.com/runner-cli/runner/runner/deps"
	"github.com/runner-cli/runner/runner/ports"
	"github.com/runner-cli/runner/runner/remote"

	"github.com/runner-cli/runner/runner/budget"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/projlock"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/runner/supervisor"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// DispatchRequest is one `runner dispatch`.
type DispatchRequest struct {
	Project string // a registered name or a path
	// Host is the registered host a path Project is on (dispatch --host).
	Host      string
	Text      string
	Agent     string
	Model     string
	AgentArgs []string
	// Permissions is --permissions (profile.PermissionsModes); "" takes
	// PermissionsDefault (the config's permissions), else runner's
	// default (see profile.Permissions).
	Permissions, PermissionsDefault string
	RequireSnapshot                 bool
	Exclusive                       bool
	Worktree                        bool // a git worktree of its own (settings.Start.Worktree)
	// WorktreeSet says Worktree was given (dispatch --worktree[=false]);
	// else the Policy's Isolation decides.
	WorktreeSet bool
	// From starts the task from another worktree task's branch; it must
	// be one of After (it starts once that task is done). It implies
	// Worktree.
	From string
	// Policy is the config's policy for a project's tasks (its isolation,
	// budgets, worktree set-up, sandbox), asked once the project is
	// resolved; nil: none.
	Policy   func(project string) config.Policy
	WaitLock bool
	Source   string // "user", "cron"; a parent task id is filled in from the pane environment
	Size     tmuxctl.Size
	UseHook  bool // install the agent's turn-end hook when its profile has one
	// MaxLevel is the deepest level a task may have (config max_level); a
	// task at that level cannot dispatch children. 0 means no limit.
	MaxLevel int
	// Tree bounds the breadth of the tree a child task joins (config
	// max_tree_tasks, max_tree_dispatches_per_minute).
	Tree breadth.Bounds
	// After holds references (ids or unique prefixes, comma-separated
	// lists allowed) of tasks that must be done before this one starts.
	After    []string
	Settings settings.Run
	// Sandbox runs the agent in a sandbox (dispatch --sandbox);
	// SandboxSet says the flag was given, else the Policy's Sandbox
	// decides. SandboxPaths are the config's sandbox_paths.
	Sandbox, SandboxSet bool
	// SandboxHome is the CLI directories' mode of a sandboxed task
	// (settings.SandboxHomeTask: a copy for the task); "" shares them.
	SandboxHome string
	// Confined is the sandboxed task that asks, through its door: the
	// new task is its child, sandboxed whatever the flags say, in its
	// folder (or below), on this machine.
	Confined     string
	SandboxPaths []string
	// Group is the group the task is a candidate of, and Snapshot the
	// group's snapshot it starts from (settings.Start.Snapshot).
	Group, Snapshot string
}

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
	prof, argv, mode, err := prepareAgent(env, req)
	if err != nil {
		return nil, err
	}
	plan, err := planDispatch(ctx, env, &req)
	if err != nil {
		return nil, err
	}
	if err := budget.CheckAgent(req.Settings.Budget(), prof); err != nil {
		return nil, err
	}
	project, dir, after := plan.project, plan.dir, plan.after
	if argv, err = siteArgv(ctx, env, prof, plan, argv); err != nil {
		return nil, err
	}
	var askEnv []string
	if mode == profile.PermissionsAsk {
		if argv, askEnv, err = askMode(ctx, env, prof, plan, argv, len(req.AgentArgs)); err != nil {
			return nil, err
		}
	}
	spec := req.startSpec(argv, plan)
	spec.Env = askEnv
	req.Settings.Start = spec
	var lock *state.ProjectLock
	handedOff := false // the lock went to a detached supervisor
	if req.Exclusive && len(after) == 0 {
		if lock, err = projlock.Take(ctx, env.Store, projects.LockKey(project, dir, plan.host), req.WaitLock); err != nil {
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
	task, err := recordTask(ctx, env, req, prof.Name, projects.Place{Project: project, Dir: dir, Host: plan.host, Pool: plan.pool}, plan.lin, after)
	if err != nil {
		return nil, err
	}
	env.Record().Journal(ctx, task, "dispatch", fmt.Sprintf("agent %s in %s: %s", prof.Name, dir, TaskTitle(req.Text)))
	if plan.host != "" {
		env.Say("task %s: %s in %s on host %s", task.ID, prof.Name, dir, plan.host)
	} else {
		env.Say("task %s: %s in %s", task.ID, prof.Name, dir)
	}

	if len(after) > 0 || plan.pool != "" {
		return dispatchQueued(ctx, env, task)
	}
	var early *remote.Early
	if plan.host != "" && !req.Settings.Detached {
		// The stream of its files starts with the agent, not after.
		early = startEarlyMirror(ctx, env, task)
		defer early.Release()
	}
	if err := start(ctx, env, task, prof, spec); err != nil {
		failUnstarted(ctx, env, task.ID, err)
		return task, err
	}
	if !req.Settings.Detached {
		err = supervise(ctx, env, task.ID, &given{prof: prof, set: req.Settings, early: early, lock: lock})
		if t, _ := env.Record().Task(context.WithoutCancel(ctx), task.ID); t != nil {
			task = t
		}
		return task, err
	}
	handedOff, err = detach(ctx, env, task, lock)
	if t, _ := env.Record().Task(context.WithoutCancel(ctx), task.ID); t != nil {
		task = t
	}
	return task, err
}

// startSpec is how the task's agent starts (recorded with its settings).
func (req *DispatchRequest) startSpec(argv []string, plan dispatchPlan) *settings.Start {
	spec := &settings.Start{Argv: argv, Size: req.Size, UseHook: req.UseHook, RequireSnapshot: req.RequireSnapshot,
		Exclusive: req.Exclusive, WaitLock: req.WaitLock, Worktree: req.Worktree, Snapshot: req.Snapshot}
	if req.Worktree {
		spec.Setup, spec.From = plan.setup, plan.from
	}
	if req.Sandbox {
		spec.Sandbox = &settings.Sandbox{Paths: req.SandboxPaths, Checked: plan.checked}
		if req.SandboxHome == settings.SandboxHomeTask {
			spec.Sandbox.Home = settings.SandboxHomeTask
		}
	}
	return spec
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

// recordTask records the new task, queued and owned by this process (a
// reconcile that finds this process gone before a supervisor takes it
// fails the task, or, waiting for others, orphans it). A long text goes to
// its own file, named after the task, before the record points at it.
func recordTask(ctx context.Context, env *Env, req DispatchRequest, agent string, at projects.Place, lin lineage, after []string) (*state.Task, error) {
	project, dir := at.Project, at.Dir
	tmux := state.TmuxTarget{Socket: env.TC.Socket(), Session: projects.SessionName(project, dir), Host: at.Host, Pool: at.Pool}
	if at.Host != "" {
		c, err := env.HostConn(ctx, at.Host)
		if err != nil {
			return nil, err
		}
		tmux.Socket = c.TC().Socket()
	}
	settings, _ := json.Marshal(req.Settings)
	now := env.Time()
	newID := state.RandomTaskID()
	text, textFile, err := env.Store.RecordText(newID, req.Text)
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
		if err := breadth.Check(s, lin.parent, req.Tree, now); err != nil {
			return err
		}
		tmux.Window = id
		task = &state.Task{ID: id, Project: project, Dir: dir, Agent: agent, Text: text, TextFile: textFile,
			Parent: lin.parent, Level: lin.level, Source: lin.source, Created: now, Settings: settings, After: after,
			Tmux: tmux, Group: req.Group,
			Transcript: env.Store.TaskFile(state.FileLog, id)}
		reason := "dispatched by " + lin.source
		if len(after) > 0 {
			reason = reconcile.WaitingReason(after)
		}
		task.SupervisorPID, task.SupervisorStart = os.Getpid(), reconcile.SelfIdentity()
		if err := ports.Allocate(s, task, req.policy(project).Ports); err != nil {
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
