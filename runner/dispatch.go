package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/runner/supervisor"

	"github.com/runner-cli/runner/runner/exit"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// DispatchRequest is one `runner dispatch`.
type DispatchRequest struct {
	Project string // a registered name or a path
	// Host is the registered host a path Project is on (dispatch --host).
	Host            string
	Text            string
	Agent           string
	Model           string
	AgentArgs       []string
	PermissionsAuto bool
	RequireSnapshot bool
	Exclusive       bool
	Worktree        bool // a git worktree of its own (StartSpec.Worktree)
	// WorktreeSet says Worktree was given (dispatch --worktree[=false]);
	// else the config's Isolation for the project decides.
	WorktreeSet bool
	// From starts the task from another worktree task's branch; it must
	// be one of After (it starts once that task is done). It implies
	// Worktree.
	From      string
	Isolation map[string]string
	// Setup maps a project (or "*") to its worktree set-up (config
	// worktree_setup).
	Setup    map[string]*config.WorktreeSetup
	WaitLock bool
	Source   string // "user", "cron"; a parent task id is filled in from the pane environment
	Size     tmuxctl.Size
	UseHook  bool // install the agent's turn-end hook when its profile has one
	// MaxLevel is the deepest level a task may have (config max_level); a
	// task at that level cannot dispatch children. 0 means no limit.
	MaxLevel int
	// After holds references (ids or unique prefixes, comma-separated
	// lists allowed) of tasks that must be done before this one starts.
	After    []string
	Settings RunSettings
	// Sandbox runs the agent in a bubblewrap sandbox (dispatch --sandbox);
	// SandboxSet says the flag was given, else the config's Sandbox for
	// the project (or "*") decides. SandboxPaths are the config's
	// sandbox_paths.
	Sandbox, SandboxSet bool
	SandboxByProject    map[string]bool
	SandboxPaths        []string
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
	prof, argv, err := prepareAgent(env, req)
	if err != nil {
		return nil, err
	}
	plan, err := planDispatch(ctx, env, &req)
	if err != nil {
		return nil, err
	}
	project, dir, after := plan.project, plan.dir, plan.after
	if argv, err = siteArgv(ctx, env, prof, plan, argv); err != nil {
		return nil, err
	}
	spec := &StartSpec{Argv: argv, Size: req.Size, UseHook: req.UseHook, RequireSnapshot: req.RequireSnapshot,
		Exclusive: req.Exclusive, WaitLock: req.WaitLock, Worktree: req.Worktree}
	if req.Worktree {
		spec.Setup, spec.From = plan.setup, plan.from
	}
	if req.Sandbox {
		spec.Sandbox = &SandboxSpec{Paths: req.SandboxPaths}
	}
	req.Settings.Start = spec
	var lock *state.ProjectLock
	handedOff := false // the lock went to a detached supervisor
	if req.Exclusive && len(after) == 0 {
		if lock, err = env.Store.LockProject(ctx, lockKey(project, dir, plan.host), req.WaitLock); err != nil {
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
	task, err := recordTask(ctx, env, req, prof.Name, projects.Place{Project: project, Dir: dir, Host: plan.host}, plan.lin, after)
	if err != nil {
		return nil, err
	}
	env.Record().Journal(ctx, task, "dispatch", fmt.Sprintf("agent %s in %s: %s", prof.Name, dir, TaskTitle(req.Text)))
	if plan.host != "" {
		env.Say("task %s: %s in %s on host %s", task.ID, prof.Name, dir, plan.host)
	} else {
		env.Say("task %s: %s in %s", task.ID, prof.Name, dir)
	}

	if len(after) > 0 {
		return dispatchQueued(ctx, env, task)
	}
	var early *earlyMirror
	if plan.host != "" && !req.Settings.Detached {
		// The stream of its files starts with the agent, not after.
		early = startEarlyMirror(ctx, env, task)
		defer early.release()
	}
	if err := start(ctx, env, task, prof, spec); err != nil {
		failUnstarted(ctx, env, task.ID, err)
		return task, err
	}
	if !req.Settings.Detached {
		err = supervise(ctx, env, task.ID, &given{prof: prof, set: req.Settings, early: early})
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

// siteArgv is the agent's argv on the site the plan runs it on: argv[0]
// found here (ResolveArgv), or checked on the host with its directory
// (remote.Argv).
func siteArgv(ctx context.Context, env *Env, prof *profile.Profile, plan dispatchPlan, argv []string) ([]string, error) {
	if plan.host == "" {
		return ResolveArgv(env, prof, argv)
	}
	c, err := env.HostConn(ctx, plan.host)
	if err != nil {
		return nil, err
	}
	return remote.Argv(ctx, c, prof, plan.dir, argv)
}

// dispatchPlan is what a dispatch resolved from the state before it
// records its task.
type dispatchPlan struct {
	project, dir string                // where it works
	host         string                // the host it works on ("" for here)
	setup        *config.WorktreeSetup // the worktree set-up, for --worktree
	lin          lineage               // its parent and level
	after        []string              // the tasks it waits for (--after)
	from         string                // the task whose branch it starts from (--from)
}

// planDispatch resolves the project, lineage, --after and --from of req
// (a --from turns on req.Worktree) and checks --require-snapshot.
func planDispatch(ctx context.Context, env *Env, req *DispatchRequest) (dispatchPlan, error) {
	var p dispatchPlan
	st, err := env.Store.Read(ctx)
	if err != nil {
		return p, err
	}
	place, err := projects.Resolve(st, req.Project, req.Host)
	if err != nil {
		return p, err
	}
	p.project, p.dir, p.host = place.Project, place.Dir, place.Host
	p.setup = req.worktreePlan(p.project)
	if p.lin, err = dispatchLineage(ctx, env, st, *req); err != nil {
		return p, err
	}
	if p.after, err = resolveAfter(st, req.After); err != nil {
		return p, err
	}
	if p.from, err = resolveFrom(st, req.From, p.after); err != nil {
		return p, err
	}
	if p.from != "" {
		req.Worktree = true
	}
	if req.Worktree {
		// A worktree needs a repository: a usage error found before the
		// task is recorded (it recorded a failed task, then exited 2).
		gctx, err := env.GitOn(ctx, p.host)
		if err != nil {
			return p, err
		}
		if _, err := gitsnap.WorktreeHome(gctx, p.dir); err != nil {
			if errors.Is(err, gitsnap.ErrNotRepo) || errors.Is(err, gitsnap.ErrBareRepo) || errors.Is(err, gitsnap.ErrGitMissing) {
				return p, exit.Usagef("--worktree: %v (a worktree task needs a git repository with a work tree: run without --worktree, or 'git init' there)", err)
			}
			return p, fmt.Errorf("--worktree: %s: %w", p.dir, err)
		}
	}
	if !req.SandboxSet {
		sb, ok := req.SandboxByProject[p.project]
		if !ok {
			sb = req.SandboxByProject["*"]
		}
		req.Sandbox = sb
	}
	if req.Sandbox {
		// Found before anything is recorded: a sandbox that cannot be
		// made is a usage error (exit 2), not a failed task.
		if p.host != "" {
			c, err := env.HostConn(ctx, p.host)
			if err != nil {
				return p, err
			}
			if _, err := c.Sandbox(ctx); err != nil {
				return p, err
			}
		} else if _, err := sandbox.Check(ctx); err != nil {
			return p, exit.Usagef("--sandbox: %v", err)
		}
	}
	if req.RequireSnapshot && p.host == "" {
		if _, err := gitsnap.List(ctx, p.dir); err != nil && (errors.Is(err, gitsnap.ErrNotRepo) || errors.Is(err, gitsnap.ErrBareRepo) || errors.Is(err, gitsnap.ErrGitMissing)) {
			return p, exit.Usagef("--require-snapshot: %v", err)
		}
	}
	return p, nil
}

// detach starts the task's supervisor in its own process, handing it the
// project lock when there is one (handedOff), or fails the task with why.
func detach(ctx context.Context, env *Env, task *state.Task, lock *state.ProjectLock) (handedOff bool, err error) {
	var extra []*os.File
	if lock != nil {
		extra = append(extra, lock.File())
	}
	pid, err := env.StartSupervisor(task.ID, extra)
	if err != nil {
		_ = env.Record().Finish(context.WithoutCancel(ctx), task.ID, state.StatusFailed, "start supervisor: "+err.Error(), nil)
		return false, err
	}
	env.Say("task %s: supervisor %d started (runner status %s, runner attach %s)", task.ID, pid, task.ID, task.ID)
	return lock != nil, nil
}

// worktreePlan settles whether the task gets a worktree of its own (the
// flag, else the config's isolation for the project or "*") and returns the
// project's worktree set-up.
func (req *DispatchRequest) worktreePlan(project string) *config.WorktreeSetup {
	if !req.WorktreeSet {
		iso, ok := req.Isolation[project]
		if !ok {
			iso = req.Isolation["*"]
		}
		req.Worktree = iso == "worktree"
	}
	setup, ok := req.Setup[project]
	if !ok {
		setup = req.Setup["*"]
	}
	return setup
}

// prepareAgent checks a dispatch's text, agent and options before anything
// is recorded, and returns the agent's profile and command line.
func prepareAgent(env *Env, req DispatchRequest) (*profile.Profile, []string, error) {
	if strings.TrimSpace(req.Text) == "" {
		return nil, nil, exit.Usagef("the task is empty: give TASK, or --file F / --file - with the text")
	}
	prof, err := profile.FindProfile(env.Profiles, req.Agent)
	if err != nil {
		return nil, nil, exit.Usagef("%v", err)
	}
	if err := CheckTaskSize(prof, req.Text); err != nil {
		return nil, nil, err
	}
	argv, err := prof.Argv(profile.LaunchOptions{Model: req.Model, PermissionsAuto: req.PermissionsAuto, ExtraArgs: req.AgentArgs})
	if err != nil {
		return nil, nil, err
	}
	if _, err := config.CompileApproveRules("--approve-rule", req.Settings.ApproveRules); err != nil {
		return nil, nil, exit.Usagef("%v", err)
	}
	return prof, argv, nil
}

// recordTask records the new task, queued and owned by this process (a
// reconcile that finds this process gone before a supervisor takes it
// fails the task, or, waiting for others, orphans it). A long text goes to
// its own file, named after the task, before the record points at it.
func recordTask(ctx context.Context, env *Env, req DispatchRequest, agent string, at projects.Place, lin lineage, after []string) (*state.Task, error) {
	project, dir := at.Project, at.Dir
	tmux := state.TmuxTarget{Socket: env.TC.Socket(), Session: projects.SessionName(project, dir), Host: at.Host}
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
	text, textFile, err := recordText(env.Store, newID, req.Text)
	if err != nil {
		return nil, err
	}
	var task *state.Task
	err = env.Record().UpdateDurably(ctx, "dispatch: record the task", func(s *state.State) error {
		id := newID
		if s.Task(id) != nil {
			if textFile != "" {
				return fmt.Errorf("task id %s is taken (a one in 10^12 chance): dispatch again", id)
			}
			id = s.NewTaskID()
		}
		tmux.Window = id
		task = &state.Task{ID: id, Project: project, Dir: dir, Agent: agent, Text: text, TextFile: textFile,
			Parent: lin.parent, Level: lin.level, Source: lin.source, Created: now, Settings: settings, After: after,
			Tmux:       tmux,
			Transcript: env.Store.TaskFile("log", id)}
		reason := "dispatched by " + lin.source
		if len(after) > 0 {
			reason = waitingReason(after)
		}
		task.SupervisorPID, task.SupervisorStart = os.Getpid(), selfIdentity()
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
	set, err := SettingsOf(task)
	if err != nil {
		return task, err
	}
	if set.Detached {
		pid, err := env.StartSupervisor(task.ID, nil)
		if err != nil {
			_ = env.Record().Finish(context.WithoutCancel(ctx), task.ID, state.StatusFailed, "start supervisor: "+err.Error(), nil)
			return task, err
		}
		env.Say("task %s: %s; supervisor %d started (runner status %s)", task.ID, waitingReason(task.After), pid, task.ID)
		if t, _ := env.Record().Task(ctx, task.ID); t != nil {
			task = t
		}
		return task, nil
	}
	err = Supervise(ctx, env, task.ID)
	if t, _ := env.Record().Task(context.WithoutCancel(ctx), task.ID); t != nil {
		task = t
	}
	return task, err
}

// failUnstarted records that a task this process recorded could not be
// started (err), unless it already ended (a cancel) or moved on: no task is
// left queued or starting with nothing behind it.
func failUnstarted(ctx context.Context, env *Env, id string, err error) {
	var left *errLeftQueue
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

// lockKey names a project's lock: its name, or its session name for a
// path.
func lockKey(project, dir, host string) string {
	switch {
	case project != "":
		return project
	case host != "":
		return host + "-" + projects.SessionName("", dir)
	}
	return projects.SessionName("", dir)
}
