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

	"github.com/runner-cli/runner/runner/config"
	launchpkg "github.com/runner-cli/runner/runner/launch"

	wtsetup "github.com/runner-cli/runner/runner/worktree/setup"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hookinstall"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// start takes the snapshot and launches the agent of queued task t
// (package launch, on this Env: starter).
func start(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile, spec *settings.Start) error {
	return launchpkg.Start(ctx, starter{env}, env.Record(), t, prof, spec)
}

// begin is start up to the pane (launch.Begin): its Finish records the
// task starting once the snapshot beside the pane is taken.
func begin(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile, spec *settings.Start) (*launchpkg.Started, error) {
	return launchpkg.Begin(ctx, starter{env}, env.Record(), t, prof, spec)
}

// beginHere starts a foreground dispatch's queued task t (given.begin)
// with begin: its agent launched, the snapshot taken beside it and the
// task recorded starting by the ready wait (waitReadyStarting), or, where
// the agent starts after its snapshot, the whole start. It returns the
// task to supervise; a start that fails is recorded (failUnstarted).
func beginHere(ctx context.Context, env *Env, t *state.Task, g *given) (*state.Task, error) {
	st, err := begin(ctx, env, t, g.prof, g.set.Start)
	if err != nil {
		failUnstarted(ctx, env, t.ID, err)
		return nil, err
	}
	if st.PaneID == "" {
		return env.Record().Task(ctx, t.ID)
	}
	g.started = st
	t.Tmux.Pane = st.PaneID
	return t, nil
}

// finishHere finishes the start beginHere left under way, if the
// supervision did not (an error before its ready wait): a start that
// fails is recorded (failUnstarted) and is the error, else err is.
func finishHere(ctx context.Context, env *Env, id string, st *launchpkg.Started, err error) error {
	if ferr := st.End(ctx); ferr != nil {
		failUnstarted(ctx, env, id, ferr)
		return ferr
	}
	return err
}

// starter is launch's Machine on env: the task's site, its git.
type starter struct{ env *Env }

var _ launchpkg.Machine = starter{}

func (s starter) SnapshotDir(ctx context.Context, t *state.Task, spec *settings.Start) (string, error) {
	return snapshotDir(ctx, s.env, t, spec)
}

func (s starter) Git(ctx context.Context, t *state.Task) (context.Context, error) {
	return s.env.GitContext(ctx, t)
}

func (s starter) Files(id string) error { return s.env.Store.PrepareTaskFiles(id) }

func (s starter) KeptIndex(id string) string { return s.env.Store.TaskFile(state.FileChangesIndex, id) }

func (s starter) Pane(ctx context.Context, t *state.Task, prof *profile.Profile, spec *settings.Start) (*launchpkg.Pane, error) {
	return launchPane(ctx, s.env, t, prof, spec)
}

func (s starter) Worktree(ctx context.Context, t *state.Task, snap *gitsnap.Snapshot, setup *config.WorktreeSetup) (wtsetup.Made, error) {
	return startWorktree(ctx, s.env, t, snap, setup)
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
	return launchpkg.Launch(ctx, starter{env}, env.Record(), t, prof, spec)
}

// launchPane is launch without the record: the pane started and set up,
// and what recording it does to the task.
func launchPane(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile, spec *settings.Start) (*launchpkg.Pane, error) {
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
	// In the call that makes the window, the rest: the session's hooks
	// append to the site's pane-died file, which the supervisors watch
	// ("PANE STATUS" when a pane's process exits, "closed" when a window
	// goes), and the pane options that name the task, its transcript and
	// (here) its state directory.
	win := tmuxctl.WindowTarget(t.Tmux.Session, t.ID)
	then := append(tmuxctl.PaneDiedHooks(win, t.Tmux.Session, s.diedFile(t)),
		[]string{"set-option", "-p", "-t", win, tmuxctl.TranscriptOption, s.transcript(t)},
		[]string{"set-option", "-p", "-t", win, "@runner_task", t.ID})
	if dir := s.stateDir(); dir != "" {
		then = append(then, []string{"set-option", "-p", "-t", win, StateDirOption, dir})
	}
	pane, err := tc.Launch(ctx, tmuxctl.WindowSpec{Session: t.Tmux.Session, Name: t.ID, Cwd: t.Dir,
		Env: penv, Argv: argv, Size: size, RemainOnExit: true, PipeTo: s.transcript(t), Then: then})
	if err != nil {
		return nil, fmt.Errorf("start %s in tmux%s: %w", prof.Name, s.where(), err)
	}
	closeWindow := func(ctx context.Context) error { return tc.KillWindow(ctx, pane) }
	where := s.where()
	return &launchpkg.Pane{ID: pane, Close: closeWindow, Record: func(x *state.Task) {
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
