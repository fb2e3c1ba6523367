// Starting a task's agent: the snapshot, the pane, its environment and
// turn-end hook, and the detached supervisor.

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/deps"
	wtsetup "github.com/runner-cli/runner/runner/worktree/setup"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hookinstall"
	"github.com/runner-cli/runner/runner/placement"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// start takes the snapshot and launches the agent of a queued task: the
// task becomes starting with its pane. A task that is no longer queued (a
// user cancelled it meanwhile) is not started (a pane launched meanwhile
// is closed).
//
// In a shared tree the snapshot is taken while the agent starts: the task
// is delivered only after both, so the snapshot holds the tree as the task
// found it (what an agent's own start-up writes there, which none of the
// built-in CLIs does, may or may not be in it). A worktree is made from
// the snapshot, so the agent starts after it; so does a sandboxed agent:
// it is not trusted, and a file it wrote as it started would otherwise
// be in the snapshot, hidden from the task's diff and kept by a restore.
func start(ctx context.Context, env *Env, task *state.Task, prof *profile.Profile, spec *settings.Start) error {
	fail := func(reason string) { placement.FailStart(context.WithoutCancel(ctx), env.Record(), task, reason) }
	snapDir, err := snapshotDir(ctx, env, task, spec)
	if err != nil {
		fail(err.Error())
		return err
	}
	gctx, err := env.GitContext(ctx, task)
	if err != nil {
		fail(err.Error())
		return err
	}
	snap, snapErr, launched, err := snapshotAndLaunch(ctx, env, task, prof, spec, func() (*gitsnap.Snapshot, error) {
		if spec.Snapshot != "" {
			return gitsnap.Alias(gctx, snapDir, spec.Snapshot, task.ID)
		}
		return gitsnap.Take(gctx, snapDir, gitsnap.Options{ID: task.ID, Label: "before " + TaskTitle(task.Text)})
	})
	if err != nil {
		fail(err.Error())
		return err
	}
	// closePane closes the pane of an agent that is not to run after all.
	closePane := func() {
		if launched != nil {
			_ = launched.close(context.WithoutCancel(ctx))
		}
	}
	snapRef, snapNote, err := snapshotOutcome(snap, snapErr, spec)
	if err != nil {
		closePane()
		fail("no snapshot: " + snapErr.Error())
		return err
	}
	var wt wtsetup.Made
	if spec.Worktree {
		if wt, err = startWorktree(gctx, env, task, snap, spec.Setup); err != nil {
			fail("worktree: " + err.Error())
			return err
		}
		snapNote += "; worktree " + wt.Dir + " on branch " + wt.Branch
	}
	if err := recordStarting(ctx, env, task.ID, snapRef, snapNote, wt, launched); err != nil {
		closePane()
		return err
	}
	if launched != nil {
		return nil
	}
	if wt.Branch != "" {
		task.Origin, task.Dir, task.Branch = task.Dir, wt.Dir, wt.Branch
	}
	if err := env.Store.PrepareTaskFiles(task.ID); err != nil {
		return err
	}
	// Launch the agent.
	if err := launch(ctx, env, task, prof, spec); err != nil {
		fail("launch failed: " + err.Error())
		return err
	}
	return nil
}

// snapshotAndLaunch takes the snapshot (take) and, in a shared tree
// without a sandbox, launches the agent's pane beside it (launched: nil
// when it is to start after the snapshot). err is a failure to start,
// which the task records; a failed snapshot is snapErr.
func snapshotAndLaunch(ctx context.Context, env *Env, task *state.Task, prof *profile.Profile, spec *settings.Start,
	take func() (*gitsnap.Snapshot, error)) (snap *gitsnap.Snapshot, snapErr error, l *launched, err error) {
	if spec.Worktree || spec.Sandbox != nil {
		snap, snapErr = take()
		return snap, snapErr, nil, nil
	}
	if err := env.Store.PrepareTaskFiles(task.ID); err != nil {
		return nil, nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		snap, snapErr = take()
	}()
	l, err = launchPane(ctx, env, task, prof, spec)
	<-done
	if err != nil {
		return nil, nil, nil, fmt.Errorf("launch failed: %w", err)
	}
	return snap, snapErr, l, nil
}

// snapshotOutcome is what the record says of the snapshot: its ref and a
// note, or, when the task needs one (--require-snapshot, --worktree), the
// usage error that ends it.
func snapshotOutcome(snap *gitsnap.Snapshot, snapErr error, spec *settings.Start) (ref, note string, err error) {
	switch {
	case snapErr == nil:
		return snap.Ref, fmt.Sprintf("snapshot %s (%s)", snap.Ref, snap.Duration.Round(time.Millisecond)), nil
	case spec.RequireSnapshot || spec.Worktree:
		flag := "--require-snapshot"
		if spec.Worktree {
			flag = "--worktree"
		}
		return "", "", fault.Usagef("%s: %v", flag, snapErr)
	}
	return "", "no snapshot: " + snapshotReason(snapErr), nil
}

// recordStarting records the task starting: its snapshot, its worktree,
// and the pane launched beside the snapshot (if one was), in one write;
// a task that left the queue meanwhile (cancelled) is an *deps.LeftQueueError.
func recordStarting(ctx context.Context, env *Env, id, snapRef, snapNote string, wt wtsetup.Made, launched *launched) error {
	return env.Record().UpdateTaskDurably(ctx, "task "+id+": starting", id, func(t *state.Task) error {
		if t.Status != state.StatusQueued {
			return &deps.LeftQueueError{Task: t}
		}
		t.SnapshotRef = snapRef
		if wt.Branch != "" {
			t.Origin, t.Dir, t.Branch = t.Dir, wt.Dir, wt.Branch
		}
		if err := t.SetStatus(state.StatusStarting, env.Time(), snapNote); err != nil {
			return err
		}
		if launched != nil {
			launched.record(t) // the pane, in the same write
		}
		return nil
	})
}

func snapshotReason(err error) string {
	switch {
	case errors.Is(err, gitsnap.ErrNotRepo):
		return "not a git repository"
	case errors.Is(err, gitsnap.ErrBareRepo):
		return "a bare repository"
	case errors.Is(err, gitsnap.ErrGitMissing):
		return "git is not installed"
	}
	return err.Error()
}

// ResolveArgv makes argv[0] absolute: "runner" is this binary; anything
// else is looked up in PATH, with a clear error when missing.
func ResolveArgv(env *Env, prof *profile.Profile, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, fault.Usagef("agent %s: the profile has no command (set profiles.%s.command in the config)", prof.Name, prof.Name)
	}
	out := append([]string(nil), argv...)
	if out[0] == "runner" && env.Exe != "" {
		out[0] = env.Exe
		return out, nil
	}
	p, err := exec.LookPath(out[0])
	if err != nil {
		return nil, fault.Usagef("agent %s: %q is not installed or not in PATH (install it, or set profiles.%s.command in the config; 'runner agents' lists what is installed)", prof.Name, out[0], prof.Name)
	}
	out[0] = p
	return out, nil
}

// paneEnv is the environment every agent pane here gets (docs/architecture.md), plus
// the caller's PATH and locale so a server started from cron does not
// leave agents with a minimal environment.
func (s localSite) paneEnv(t *state.Task, prof *profile.Profile) []string {
	env := s.env
	kv := append(projects.TaskEnv(t),
		"RUNNER_STATE_DIR="+env.Store.Dir(),
		"RUNNER_SOCKET="+env.TC.Socket(),
		"RUNNER_TMUX_SOCKET="+env.TC.Socket(),
		// Where a turn-end hook of the agent writes (the OpenCode plugin of
		// scripts/ reads it; any hook may).
		"RUNNER_EVENTS_FILE="+env.Store.TaskFile(state.FileEvents, t.ID),
	)
	for _, k := range []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE"} {
		if v := env.Getenv(k); v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	if env.Environ != nil && len(prof.PassEnv) > 0 {
		for _, e := range env.Environ() {
			k, _, ok := strings.Cut(e, "=")
			if !ok || strings.HasPrefix(k, "RUNNER_") || !tmuxctl.ValidEnvName(k) {
				continue // not ours to pass, or no shell could set it
			}
			for _, pat := range prof.PassEnv {
				if k == pat || (strings.HasSuffix(pat, "*") && strings.HasPrefix(k, strings.TrimSuffix(pat, "*"))) {
					kv = append(kv, e)
					break
				}
			}
		}
	}
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		if v := env.Getenv(k); v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	return append(kv, prof.EnvList()...)
}

// launch starts the agent in a new window of the task's session, on its
// site (this machine or its host): remain-on-exit, the pane-died hooks,
// the transcript pipe, the agent's turn-end hook when its profile has one,
// and the sandbox with --sandbox. It is the one launch of every task: a
// dispatch, a queued task's start, a resume.
func launch(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile, spec *settings.Start) error {
	l, err := launchPane(ctx, env, t, prof, spec)
	if err != nil {
		return err
	}
	return env.Record().Update(ctx, t.ID, l.record)
}

// launched is an agent's pane launched by launchPane, not yet recorded.
type launched struct {
	// record sets the pane on the task (and says where it runs, and
	// that it is sandboxed, in its last status's reason).
	record func(*state.Task)
	// close closes the pane's window (an agent not to run after all).
	close func(context.Context) error
}

// launchPane is launch without the record: the pane started and set up,
// and what recording it does to the task.
func launchPane(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile, spec *settings.Start) (*launched, error) {
	s, err := siteOf(ctx, env, t)
	if err != nil {
		return nil, err
	}
	argv := append([]string(nil), spec.Argv...)
	penv := append(s.paneEnv(t, prof), spec.Env...)
	args, hookEnv, err := s.hook(ctx, t, prof, penv, spec.UseHook && prof.Hook != nil)
	if err != nil {
		return nil, err
	}
	argv, penv = append(argv, args...), append(penv, hookEnv...)
	var writable []string
	if _, local := s.(localSite); local && spec.Sandbox != nil {
		penv = append(penv, door.EnvDoor+"="+env.DoorPath(t.ID))
	}
	if spec.Sandbox != nil {
		if argv, writable, err = s.sandbox(ctx, t, prof, penv, argv, spec.Sandbox); err != nil {
			return nil, err
		}
	}
	size := spec.Size
	if size.Width == 0 {
		size = tmuxctl.Size{Width: 200, Height: 50}
	}
	tc := s.client()
	pane, err := tc.Launch(ctx, tmuxctl.WindowSpec{Session: t.Tmux.Session, Name: t.ID, Cwd: t.Dir,
		Env: penv, Argv: argv, Size: size, RemainOnExit: true, PipeTo: s.transcript(t)})
	if err != nil {
		return nil, fmt.Errorf("start %s in tmux%s: %w", prof.Name, s.where(), err)
	}
	closeWindow := func(ctx context.Context) error { return tc.KillWindow(ctx, pane) }
	// One tmux call for the rest: the session's hooks append to the
	// site's pane-died file, which the supervisors watch ("PANE STATUS"
	// when a pane's process exits, "closed" when a window goes), and the
	// pane options that name the task, its transcript and (here) its
	// state directory.
	batch := append(tmuxctl.PaneDiedHooks(pane, t.Tmux.Session, s.diedFile(t)),
		[]string{"set-option", "-p", "-t", pane, tmuxctl.TranscriptOption, s.transcript(t)},
		[]string{"set-option", "-p", "-t", pane, "@runner_task", t.ID})
	if dir := s.stateDir(); dir != "" {
		batch = append(batch, []string{"set-option", "-p", "-t", pane, StateDirOption, dir})
	}
	if err := tc.Batch(ctx, batch...); err != nil {
		return nil, err
	}
	where := s.where()
	return &launched{close: closeWindow, record: func(x *state.Task) {
		x.Tmux.Pane = pane
		if len(x.History) > 0 {
			x.History[len(x.History)-1].Reason += "; pane " + pane + where
			if writable != nil {
				x.History[len(x.History)-1].Reason += "; sandboxed (bwrap)"
			}
		}
		if writable != nil {
			x.Sandbox = writable
		}
	}}, nil
}

// hook installs the profile's turn-end hook for t (package hookinstall).
// Without use, or without runner's own binary to run as the hook, there is
// none.
func (s localSite) hook(_ context.Context, t *state.Task, prof *profile.Profile, penv []string, use bool) (args, hookEnv []string, err error) {
	env := s.env
	if !use || env.Exe == "" {
		return nil, nil, nil
	}
	return hookinstall.Install(hookinstall.Place{Exe: env.Exe, TaskID: t.ID, Events: env.Store.TaskFile(state.FileEvents, t.ID),
		Dir: env.Store.TaskFile(state.FileHookDir, t.ID), Say: env.Say}, prof, penv)
}

// ProjectLockFlag is the flag of `runner supervise` naming the descriptor
// of the project lock its dispatch handed over (fd 3).
const ProjectLockFlag = "project-lock-fd"

// StartSupervisor starts `runner supervise ID` as a detached process in its
// own session, logging to the task's supervisor log, and records its pid.
// A project lock (nil: none) passes to it as fd 3, which it holds until it
// records the task's end.
func (env *Env) StartSupervisor(id string, lock *state.ProjectLock) (int, error) {
	var extra []*os.File
	args := []string{"supervise", id}
	if lock != nil {
		extra = []*os.File{lock.File()}
		args = append(args, "--"+ProjectLockFlag+"=3")
	}
	pid, err := env.SpawnRunner(env.Store.TaskFile(state.FileSupervisorLog, id), extra, args...)
	if err != nil {
		return 0, fmt.Errorf("start supervisor: %w", err)
	}
	// The supervisor records itself too: a busy lock here must not make a
	// caller believe no supervisor runs (and start a second one).
	// One task's change: handed to the lock's holder (Store.UpdateTask).
	ident := proctree.Identity(pid)
	if err := env.Record().UpdateTaskDurably(context.Background(), "task "+id+": record supervisor "+strconv.Itoa(pid), id, func(t *state.Task) error {
		t.SupervisorPID, t.SupervisorStart = pid, ident
		return nil
	}); err != nil && !errors.Is(err, state.ErrTaskNotFound) {
		env.Say("task %s: supervisor %d started; recording its pid: %v", id, pid, err)
	}
	return pid, nil
}

// StateDirOption is the pane option naming the state directory of the
// task that runs in the pane (gc closes only its own windows).
const StateDirOption = "@runner_state"
