package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/runner/exit"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Env is what the domain operations need from the outside world. cmd/runner
// builds one per command.
type Env struct {
	Store    *state.Store
	TC       *tmuxctl.Client
	Profiles []*profile.Profile
	Getenv   func(string) string
	// Environ lists the environment (for the profiles' pass_env); nil
	// means none is passed beyond the fixed variables.
	Environ func() []string
	// Exe is the absolute path of the runner binary (started as the
	// supervisor, used in hooks and for the sim profile's "runner").
	Exe string
	// Progress receives one-line progress messages (stderr in the
	// foreground; nil for none).
	Progress io.Writer
	// Log, when set, receives those messages instead, as records (the
	// supervisor's log, `runner supervise --log-level`).
	Log *slog.Logger
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Env) say(format string, args ...any) {
	if e.Log != nil {
		e.Log.Info(fmt.Sprintf(format, args...))
		return
	}
	if e.Progress != nil {
		fmt.Fprintf(e.Progress, "runner: "+format+"\n", args...)
	}
}

// RunSettings are the dispatch options a supervisor needs; they are stored
// with the task so a detached or resumed supervisor behaves the same.
type RunSettings struct {
	Timeout         time.Duration     `json:"timeout"`
	ReadyTimeout    time.Duration     `json:"ready_timeout"`
	Settle          time.Duration     `json:"settle"`         // from --settle; 0: the profile's, else DefaultSettle
	DefaultSettle   time.Duration     `json:"default_settle"` // the config's settle
	Idle            time.Duration     `json:"idle"`
	YesTrust        bool              `json:"yes_trust,omitempty"`
	WaitInput       bool              `json:"wait_input,omitempty"`
	ApproveRules    []string          `json:"approve_rules,omitempty"`
	Commit          bool              `json:"commit,omitempty"`
	CommitBranch    bool              `json:"commit_branch,omitempty"`
	CommitAll       bool              `json:"commit_all,omitempty"`
	Notify          []string          `json:"notify,omitempty"`
	NotifyTimeout   time.Duration     `json:"notify_timeout,omitempty"`
	Awareness       AwarenessMode     `json:"awareness,omitempty"`
	AwarenessMax    int               `json:"awareness_max,omitempty"`
	Detached        bool              `json:"detached,omitempty"`
	ProfileOverride map[string]string `json:"-"`

	// NoTmuxMessage turns off the tmux display-message in the project's
	// session when the task ends or needs input (config notify_tmux).
	NoTmuxMessage bool `json:"no_tmux_message,omitempty"`
	// Start is how to start the agent; Dispatch fills it in.
	Start *StartSpec `json:"start,omitempty"`
}

// StartSpec is what starting a task's agent needs beyond its record. It is
// kept with the task's settings, so the process that waited for a queued
// task's dependencies can start it.
type StartSpec struct {
	Argv            []string     `json:"argv"` // argv[0] absolute
	Size            tmuxctl.Size `json:"size"`
	UseHook         bool         `json:"use_hook,omitempty"`
	RequireSnapshot bool         `json:"require_snapshot,omitempty"`
	// Exclusive and WaitLock: the project lock is taken when a queued task
	// starts (a task that starts at once takes it at dispatch).
	Exclusive bool `json:"exclusive,omitempty"`
	WaitLock  bool `json:"wait_lock,omitempty"`
}

// DispatchRequest is one `runner dispatch`.
type DispatchRequest struct {
	Project         string // a registered name or a path
	Text            string
	Agent           string
	Model           string
	AgentArgs       []string
	PermissionsAuto bool
	RequireSnapshot bool
	Exclusive       bool
	WaitLock        bool
	Source          string // "user", "cron"; a parent task id is filled in from the pane environment
	Size            tmuxctl.Size
	UseHook         bool // install the agent's turn-end hook when its profile has one
	// MaxLevel is the deepest level a task may have (config max_level); a
	// task at that level cannot dispatch children. 0 means no limit.
	MaxLevel int
	// After holds references (ids or unique prefixes, comma-separated
	// lists allowed) of tasks that must be done before this one starts.
	After    []string
	Settings RunSettings
}

// ErrTaskFailed is wrapped by the error of a task that ended failed or
// exited (exit 1).
var ErrTaskFailed = errors.New("task failed")

// ErrTaskTimeout is wrapped by the error of a task that timed out (exit 3).
var ErrTaskTimeout = errors.New("task timed out")

// ErrCancelled is wrapped by the error of a cancelled task.
var ErrCancelled = errors.New("task cancelled")

// isPathArg says whether a PROJECT argument is a path rather than a name.
func isPathArg(s string) bool {
	return s == "." || s == ".." || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") ||
		strings.HasPrefix(s, "../") || strings.HasPrefix(s, "~") || strings.Contains(s, "/")
}

// ResolveProject returns the project name and its absolute directory. A
// path that is the directory of a registered project gives that project's
// name (a project's identity is its directory); any other path gives "".
func ResolveProject(st *state.State, arg string) (string, string, error) {
	if arg == "" {
		return "", "", exit.Usagef("no project: give a registered name (see 'runner project list') or a directory such as .")
	}
	if isPathArg(arg) {
		abs, err := projectPath(arg)
		if err != nil {
			return "", "", exit.Usagef("project path %q: %v", arg, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return "", "", exit.Usagef("project path %q: directory %s does not exist", arg, abs)
		}
		if name := registeredName(st, abs); name != "" {
			return name, st.Projects[name].Dir, nil
		}
		return "", abs, nil
	}
	p, ok := st.Projects[arg]
	if !ok {
		return "", "", exit.Usagef("project %q is not registered (add it with 'runner project add %s DIR', or give a path such as ./%s)", arg, arg, arg)
	}
	if fi, err := os.Stat(p.Dir); err != nil || !fi.IsDir() {
		return "", "", exit.Usagef("project %q: directory %s does not exist (re-add it with 'runner project rm %s' and 'runner project add %s DIR')", arg, p.Dir, arg, arg)
	}
	return arg, p.Dir, nil
}

// SessionName is the tmux session of a project: its name, or for a path
// "dir-<base>-<hash>" (a 32-bit hash of the directory, so two directories
// with the same base name get two sessions). Dots are replaced (tmux reserves them in targets).
func SessionName(project, dir string) string {
	name := project
	if name == "" {
		var h uint32 = 2166136261
		for i := 0; i < len(dir); i++ {
			h = (h ^ uint32(dir[i])) * 16777619
		}
		base := regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(filepath.Base(dir), "_")
		if len(base) > 40 {
			base = base[:40]
		}
		name = fmt.Sprintf("dir-%s-%08x", base, h)
	}
	return strings.ReplaceAll(name, ".", "_")
}

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
	st, err := env.Store.Read(ctx)
	if err != nil {
		return nil, err
	}
	project, dir, err := ResolveProject(st, req.Project)
	if err != nil {
		return nil, err
	}
	lin, err := dispatchLineage(ctx, env, st, req)
	if err != nil {
		return nil, err
	}
	after, err := resolveAfter(st, req.After)
	if err != nil {
		return nil, err
	}
	if req.RequireSnapshot {
		if _, err := gitsnap.List(ctx, dir); err != nil && (errors.Is(err, gitsnap.ErrNotRepo) || errors.Is(err, gitsnap.ErrBareRepo) || errors.Is(err, gitsnap.ErrGitMissing)) {
			return nil, exit.Usagef("--require-snapshot: %v", err)
		}
	}
	spec := &StartSpec{Argv: argv, Size: req.Size, UseHook: req.UseHook, RequireSnapshot: req.RequireSnapshot,
		Exclusive: req.Exclusive, WaitLock: req.WaitLock}
	req.Settings.Start = spec
	var lock *state.ProjectLock
	handedOff := false // the lock went to a detached supervisor
	if req.Exclusive && len(after) == 0 {
		if lock, err = env.Store.LockProject(ctx, lockKey(project, dir), req.WaitLock); err != nil {
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
	task, err := env.recordTask(ctx, req, prof.Name, project, dir, lin, after)
	if err != nil {
		return nil, err
	}
	env.journal(ctx, task, "dispatch", fmt.Sprintf("agent %s in %s: %s", prof.Name, dir, taskTitle(req.Text)))
	env.say("task %s: %s in %s", task.ID, prof.Name, dir)

	if len(after) > 0 {
		return env.dispatchQueued(ctx, task)
	}
	if err := env.start(ctx, task, spec); err != nil {
		env.failUnstarted(ctx, task.ID, err)
		return task, err
	}
	if !req.Settings.Detached {
		err = Supervise(ctx, env, task.ID)
		if t, _ := env.task(context.WithoutCancel(ctx), task.ID); t != nil {
			task = t
		}
		return task, err
	}
	var extra []*os.File
	if lock != nil {
		extra = append(extra, lock.File())
	}
	pid, err := env.StartSupervisor(task.ID, extra)
	if err != nil {
		_ = env.finish(context.WithoutCancel(ctx), task.ID, state.StatusFailed, "start supervisor: "+err.Error(), nil)
		return task, err
	}
	handedOff = lock != nil
	env.say("task %s: supervisor %d started (runner status %s, runner attach %s)", task.ID, pid, task.ID, task.ID)
	if t, _ := env.task(ctx, task.ID); t != nil {
		task = t
	}
	return task, nil
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
	if argv, err = resolveArgv(env, prof, argv); err != nil {
		return nil, nil, err
	}
	if _, err := CompileApproveRules("--approve-rule", req.Settings.ApproveRules); err != nil {
		return nil, nil, exit.Usagef("%v", err)
	}
	return prof, argv, nil
}

// lineage is where a new task sits: its parent, level and source.
type lineage struct {
	parent string
	level  int
	source string
}

// dispatchLineage makes a dispatch from inside a runner pane a child of
// that pane's task, refused past the config's max_level.
func dispatchLineage(ctx context.Context, env *Env, st *state.State, req DispatchRequest) (lineage, error) {
	lin := lineage{level: 1, source: req.Source}
	if lin.source == "" {
		lin.source = state.SourceUser
	}
	if pid := callerTask(ctx, env, st); pid != "" && state.ValidTaskID(pid) {
		if pt := st.Task(pid); pt != nil {
			lin = lineage{parent: pt.ID, level: pt.Level + 1, source: pt.ID}
			if req.MaxLevel > 0 && pt.Level >= req.MaxLevel {
				return lin, exit.Usagef("level-%d tasks cannot delegate (task %s is at the last level; max_level is %d in the config)", pt.Level, pt.ID, req.MaxLevel)
			}
		}
	}
	return lin, nil
}

// recordTask records the new task, queued and owned by this process (a
// reconcile that finds this process gone before a supervisor takes it
// fails the task, or, waiting for others, orphans it). A long text goes to
// its own file, named after the task, before the record points at it.
func (env *Env) recordTask(ctx context.Context, req DispatchRequest, agent, project, dir string, lin lineage, after []string) (*state.Task, error) {
	settings, _ := json.Marshal(req.Settings)
	now := env.now()
	newID := state.RandomTaskID()
	text, textFile, err := recordText(env.Store, newID, req.Text)
	if err != nil {
		return nil, err
	}
	var task *state.Task
	err = env.updateDurably(ctx, "dispatch: record the task", func(s *state.State) error {
		id := newID
		if s.Task(id) != nil {
			if textFile != "" {
				return fmt.Errorf("task id %s is taken (a one in 10^12 chance): dispatch again", id)
			}
			id = s.NewTaskID()
		}
		task = &state.Task{ID: id, Project: project, Dir: dir, Agent: agent, Text: text, TextFile: textFile,
			Parent: lin.parent, Level: lin.level, Source: lin.source, Created: now, Settings: settings, After: after,
			Tmux:       state.TmuxTarget{Socket: env.TC.Socket(), Session: SessionName(project, dir), Window: id},
			Transcript: env.Store.TaskFile("log", id)}
		reason := "dispatched by " + lin.source
		if len(after) > 0 {
			reason = waitingReason(after)
		}
		task.SupervisorPID = os.Getpid()
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
func (env *Env) dispatchQueued(ctx context.Context, task *state.Task) (*state.Task, error) {
	var set RunSettings
	_ = json.Unmarshal(task.Settings, &set)
	if set.Detached {
		pid, err := env.StartSupervisor(task.ID, nil)
		if err != nil {
			_ = env.finish(context.WithoutCancel(ctx), task.ID, state.StatusFailed, "start supervisor: "+err.Error(), nil)
			return task, err
		}
		env.say("task %s: %s; supervisor %d started (runner status %s)", task.ID, waitingReason(task.After), pid, task.ID)
		if t, _ := env.task(ctx, task.ID); t != nil {
			task = t
		}
		return task, nil
	}
	err := Supervise(ctx, env, task.ID)
	if t, _ := env.task(context.WithoutCancel(ctx), task.ID); t != nil {
		task = t
	}
	return task, err
}

// failUnstarted records that a task this process recorded could not be
// started (err), unless it already ended (a cancel) or moved on: no task is
// left queued or starting with nothing behind it.
func (env *Env) failUnstarted(ctx context.Context, id string, err error) {
	var left *errLeftQueue
	if errors.As(err, &left) {
		return
	}
	_ = env.updateDurably(context.WithoutCancel(ctx), "task "+id+": failed to start", func(st *state.State) error {
		t := st.Task(id)
		if t == nil || (t.Status != state.StatusQueued && t.Status != state.StatusStarting) || t.SupervisorPID != os.Getpid() {
			return nil
		}
		return t.SetStatus(state.StatusFailed, env.now(), "could not start: "+err.Error())
	})
}

// lockKey names a project's lock: its name, or its session name for a
// path.
func lockKey(project, dir string) string {
	if project == "" {
		return SessionName("", dir)
	}
	return project
}

// start takes the snapshot and launches the agent of a queued task: the
// task becomes starting with its pane. A task that is no longer queued (a
// user cancelled it meanwhile) is not started.
func (env *Env) start(ctx context.Context, task *state.Task, spec *StartSpec) error {
	prof, err := profile.FindProfile(env.Profiles, task.Agent)
	if err != nil {
		return fmt.Errorf("task %s: %w", task.ID, err)
	}
	// Snapshot before anything runs.
	snapRef, snapNote := "", ""
	snap, err := gitsnap.Take(ctx, task.Dir, gitsnap.Options{ID: task.ID, Label: "before " + taskTitle(task.Text)})
	switch {
	case err == nil:
		snapRef = snap.Ref
		snapNote = fmt.Sprintf("snapshot %s (%s)", snap.Ref, snap.Duration.Round(time.Millisecond))
	case spec.RequireSnapshot:
		_ = env.finish(ctx, task.ID, state.StatusFailed, "no snapshot: "+err.Error(), nil)
		return exit.Usagef("--require-snapshot: %v", err)
	default:
		snapNote = "no snapshot: " + snapshotReason(err)
	}
	err = env.updateDurably(ctx, "task "+task.ID+": starting", func(s *state.State) error {
		t := s.Task(task.ID)
		if t == nil {
			return fmt.Errorf("task %s: %w", task.ID, state.ErrTaskNotFound)
		}
		if t.Status != state.StatusQueued {
			return &errLeftQueue{t}
		}
		t.SnapshotRef = snapRef
		return t.SetStatus(state.StatusStarting, env.now(), snapNote)
	})
	if err != nil {
		return err
	}
	if err := env.Store.PrepareTaskFiles(task.ID); err != nil {
		return err
	}
	// Launch the agent.
	if err := env.launch(ctx, task, prof, spec); err != nil {
		_ = env.finish(context.WithoutCancel(ctx), task.ID, state.StatusFailed, "launch failed: "+err.Error(), nil)
		return err
	}
	return nil
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

// resolveArgv makes argv[0] absolute: "runner" is this binary; anything
// else is looked up in PATH, with a clear error when missing.
func resolveArgv(env *Env, prof *profile.Profile, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, exit.Usagef("agent %s: the profile has no command (set profiles.%s.command in the config)", prof.Name, prof.Name)
	}
	out := append([]string(nil), argv...)
	if out[0] == "runner" && env.Exe != "" {
		out[0] = env.Exe
		return out, nil
	}
	p, err := exec.LookPath(out[0])
	if err != nil {
		return nil, exit.Usagef("agent %s: %q is not installed or not in PATH (install it, or set profiles.%s.command in the config; 'runner agents' lists what is installed)", prof.Name, out[0], prof.Name)
	}
	out[0] = p
	return out, nil
}

// paneEnv is the environment every agent pane gets (DESIGN.md), plus the
// caller's PATH and locale so a server started from cron does not leave
// agents with a minimal environment.
func paneEnv(env *Env, t *state.Task, prof *profile.Profile) []string {
	kv := []string{
		"RUNNER_TASK_ID=" + t.ID,
		"RUNNER_PROJECT=" + ProjectLabel(t),
		"RUNNER_LEVEL=" + strconv.Itoa(t.Level),
		"RUNNER_PARENT=" + t.Parent,
		"RUNNER_STATE_DIR=" + env.Store.Dir(),
		"RUNNER_SOCKET=" + env.TC.Socket(),
		"RUNNER_TMUX_SOCKET=" + env.TC.Socket(),
		// Where a turn-end hook of the agent writes (the OpenCode plugin of
		// scripts/ reads it; any hook may).
		"RUNNER_EVENTS_FILE=" + env.Store.TaskFile("events", t.ID),
	}
	for _, k := range []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE"} {
		if v := env.Getenv(k); v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	if env.Environ != nil && len(prof.PassEnv) > 0 {
		for _, e := range env.Environ() {
			k, _, ok := strings.Cut(e, "=")
			if !ok || strings.HasPrefix(k, "RUNNER_") {
				continue
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

// isTaskIdentityVar reports whether k is one of the variables that say
// which task a process belongs to (set in every agent pane). A process
// that is not that task (a supervisor started from a pane, a shadow) must
// not inherit them.
func isTaskIdentityVar(k string) bool {
	switch k {
	case "RUNNER_TASK_ID", "RUNNER_PARENT", "RUNNER_LEVEL", "RUNNER_PROJECT":
		return true
	}
	return false
}

// launch starts the agent in a new window of the project's session, with
// remain-on-exit, the pane-died hook, the transcript pipe and the agent's
// turn-end hook when its profile has one.
func (env *Env) launch(ctx context.Context, t *state.Task, prof *profile.Profile, spec *StartSpec) error {
	argv := append([]string(nil), spec.Argv...)
	var hookEnv []string
	penv := paneEnv(env, t, prof) // the agent's environment, before the hook's
	if spec.UseHook && prof.Hook != nil && env.Exe != "" {
		events := env.Store.TaskFile("events", t.ID)
		chain, err := profile.UserHookChain(prof.Hook, penv)
		if err != nil {
			// runner's notify would replace the user's: refuse rather than
			// drop it silently.
			return exit.Usagef("agent %s: runner's turn-end hook would replace your own, which cannot be read: %v (fix the file, or run without runner's hook: --no-hook)", prof.Name, err)
		}
		paths := profile.HookPaths{
			Command: tmuxctl.ShellQuote(env.Exe) + " hook --task " + t.ID,
			Events:  events,
			Dir:     env.Store.TaskFile("hook-dir", t.ID),
			Chain:   chain,
		}
		hl, err := prof.Hook.Render(paths)
		if err != nil {
			return fmt.Errorf("agent %s: %w", prof.Name, err)
		}
		why := hookUnusable(prof.Hook, hl.SettingsPath)
		if why != "" && prof.Hook.RootOwned && os.Geteuid() == 0 {
			// runner runs as root (a container, CI) with its state where
			// others may write (under /tmp): a directory of root's that
			// nobody else may write serves instead.
			if st, err := os.Stat(filepath.Dir(RootHookDir)); err == nil && st.IsDir() {
				paths.Dir = filepath.Join(RootHookDir, t.ID)
				if alt, err := prof.Hook.Render(paths); err == nil && hookUnusable(prof.Hook, alt.SettingsPath) == "" {
					hl, why = alt, ""
				}
			}
		}
		if why != "" {
			env.say("task %s: %s: no turn-end hook (%s); the screen ends each turn", t.ID, prof.Name, why)
		} else {
			if hl.Settings != nil {
				if err := writeHookFile(hl.SettingsPath, hl.Settings); err != nil {
					return fmt.Errorf("agent %s: write the hook settings %s: %w (check the state directory's permissions)", prof.Name, hl.SettingsPath, err)
				}
			}
			argv = append(argv, hl.Args...)
			hookEnv = hl.Env
			if prof.Hook.EnvMergeJSON {
				if hookEnv, err = profile.MergeJSONEnv(penv, hookEnv); err != nil {
					return exit.Usagef("agent %s: runner's turn-end hook: %v (fix the variable, or run without runner's hook: --no-hook)", prof.Name, err)
				}
			}
		}
	}
	size := spec.Size
	if size.Width == 0 {
		size = tmuxctl.Size{Width: 200, Height: 50}
	}
	pane, err := env.TC.Launch(ctx, tmuxctl.WindowSpec{Session: t.Tmux.Session, Name: t.ID, Cwd: t.Dir,
		Env: append(penv, hookEnv...), Argv: argv, Size: size, RemainOnExit: true, PipeTo: t.Transcript})
	if err != nil {
		return fmt.Errorf("start %s in tmux: %w", prof.Name, err)
	}
	// One tmux call for the rest: the session's hooks append to the
	// pane-died file, which every supervisor of this state dir watches
	// ("PANE STATUS" when a pane's process exits, "closed" when a window
	// goes), and the pane options that name the task and its transcript.
	died := tmuxctl.ShellQuote(env.Store.PaneDiedFile())
	target := tmuxctl.SessionTarget(t.Tmux.Session) + ":"
	err = env.TC.Batch(ctx,
		// pane-died is a window hook: set it on this task's window.
		[]string{"set-hook", "-w", "-t", pane, "pane-died", `run-shell -b "printf '%s %s\n' '#{pane_id}' '#{pane_dead_status}' >> ` + died + `"`},
		[]string{"set-hook", "-t", target, "window-unlinked", `run-shell -b "echo closed >> ` + died + `"`},
		[]string{"set-option", "-p", "-t", pane, tmuxctl.TranscriptOption, t.Transcript},
		[]string{"set-option", "-p", "-t", pane, "@runner_task", t.ID},
		[]string{"set-option", "-p", "-t", pane, stateDirOption, env.Store.Dir()},
	)
	if err != nil {
		return err
	}
	return env.update(ctx, t.ID, func(x *state.Task) {
		x.Tmux.Pane = pane
		x.History[len(x.History)-1].Reason += "; pane " + pane
	})
}

// hookUnusable says why a hook's settings file at path would not be read
// by its CLI ("" when it would): a RootOwned file needs root to own it and
// every directory above it, none writable by group or others.
// RootHookDir holds the hook files of a CLI that reads them only from
// directories root owns and nobody else may write (Hook.RootOwned), when
// runner runs as root and its state directory does not qualify: on tmpfs,
// gone at reboot.
const RootHookDir = "/run/runner-hooks"

func hookUnusable(h *profile.Hook, path string) string {
	if !h.RootOwned || path == "" {
		return ""
	}
	if os.Geteuid() != 0 {
		return "the CLI reads its system settings file only when root owns it, and runner does not run as root"
	}
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil {
			if st.Mode().Perm()&0o022 != 0 {
				return fmt.Sprintf("the CLI does not read a system settings file under %s, which group or others may write", d)
			}
			if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid != 0 {
				return fmt.Sprintf("the CLI does not read a system settings file under %s, which root does not own", d)
			}
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// writeHookFile writes a hook's settings file (0600, its directories 0700)
// by a rename, so a CLI starting at that moment never reads half of it.
func writeHookFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// StartSupervisor starts `runner supervise ID` as a detached process in its
// own session, logging to the task's supervisor log, and records its pid.
// extra files are inherited (a project lock).
func (env *Env) StartSupervisor(id string, extra []*os.File) (int, error) {
	if env.Exe == "" {
		return 0, errors.New("cannot find the runner binary to start a supervisor")
	}
	logPath := env.Store.TaskFile("supervisor-log", id)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return 0, err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("open supervisor log: %w", err)
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	cmd := exec.Command(env.Exe, "--socket", env.TC.Socket(), "supervise", id)
	// A supervisor started from inside a task's pane (a message to an
	// idle task) must not pass for that task.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return isTaskIdentityVar(k)
	})
	cmd.Env = append(cmd.Env, "RUNNER_STATE_DIR="+env.Store.Dir())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.ExtraFiles = extra
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start supervisor: %w", err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	// The supervisor records itself too: a busy lock here must not make a
	// caller believe no supervisor runs (and start a second one).
	if err := env.updateDurably(context.Background(), "task "+id+": record supervisor "+strconv.Itoa(pid), func(st *state.State) error {
		if t := st.Task(id); t != nil {
			t.SupervisorPID = pid
		}
		return nil
	}); err != nil {
		env.say("task %s: supervisor %d started; recording its pid: %v", id, pid, err)
	}
	return pid, nil
}

// task reads one task by id or unique prefix.
func (env *Env) task(ctx context.Context, ref string) (*state.Task, error) {
	st, err := env.Store.Read(ctx)
	if err != nil {
		return nil, err
	}
	return st.FindTask(ref)
}

// update applies fn to one task under the state lock, durably (updateDurably).
func (env *Env) update(ctx context.Context, id string, fn func(*state.Task)) error {
	return env.updateDurably(ctx, "task "+id, func(s *state.State) error {
		t := s.Task(id)
		if t == nil {
			return fmt.Errorf("task %s: %w", id, state.ErrTaskNotFound)
		}
		fn(t)
		return nil
	})
}

// setStatus records a status change unless the task already ended (a
// cancel from another process wins over a late supervisor).
func (env *Env) setStatus(ctx context.Context, id string, s state.Status, reason string, fn func(*state.Task)) error {
	var dropped []*state.Message
	// A status change is never dropped for a busy lock or a full disk.
	err := env.updateDurably(ctx, "task "+id+": "+string(s)+": "+reason, func(st *state.State) error {
		dropped = nil
		t := st.Task(id)
		if t == nil {
			return fmt.Errorf("task %s: %w", id, state.ErrTaskNotFound)
		}
		if t.Status.IsTerminal() {
			return nil
		}
		if fn != nil {
			fn(t)
		}
		if t.Status != s || s == state.StatusRunning {
			_ = t.SetStatus(s, env.now(), reason)
		}
		if s.IsTerminal() && s != state.StatusDone {
			// Its queue can never be delivered now.
			dropped = dropQueue(st, id, env.now(), fmt.Sprintf("task %s ended %s before taking it", id, s))
		}
		return nil
	})
	env.journalDropped(ctx, dropped)
	return err
}

func (env *Env) finish(ctx context.Context, id string, s state.Status, reason string, fn func(*state.Task)) error {
	err := env.setStatus(ctx, id, s, reason, fn)
	if t, _ := env.task(ctx, id); t != nil {
		env.journal(ctx, t, "status", string(s)+": "+reason)
	}
	return err
}

func (env *Env) journal(ctx context.Context, t *state.Task, kind, msg string) {
	_ = env.Store.Journal(ctx, state.Event{Time: env.now(), Kind: kind, PID: os.Getpid(), Project: t.Project, Task: t.ID, Status: t.Status, Message: msg})
}

// taskTitle is a task's first line, clipped for messages and labels.
func taskTitle(s string) string { return FirstLine(s, 100) }

// settleFor picks the settle time: --settle, else the profile's, else the
// config's.
func (s RunSettings) settleFor(p *profile.Profile) time.Duration {
	switch {
	case s.Settle > 0:
		return s.Settle
	case p.Settle.Duration > 0:
		return p.Settle.Duration
	}
	return s.DefaultSettle
}
