package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/runner/exit"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// processAlive reports whether pid is a live process. A zombie is dead: a
// killed supervisor whose parent (init in a container that does not reap)
// never waits for it stays a zombie, and kill(pid, 0) still succeeds.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !isZombie(pid)
}

// isZombie reads the process state from /proc (Linux); elsewhere it
// reports false.
func isZombie(pid int) bool {
	_, _, ok := zombieExit(pid)
	return ok
}

// zombieExit reports whether pid is a zombie and its exit status (see
// tmuxctl.ZombieExit, which owns the /proc reading).
func zombieExit(pid int) (status int, known, ok bool) { return tmuxctl.ZombieExit(pid) }

// Reconcile compares the active tasks with the live panes and supervisors:
// a task whose supervisor is gone becomes orphaned (its pane alive: it can
// be resumed) or failed (its pane gone too). Tasks waiting for input keep
// their status: they wait for the user, who resumes them after answering.
// It returns the tasks after the change.
func Reconcile(ctx context.Context, env *Env) (*state.State, error) {
	st, _, err := reconcile(ctx, env, false)
	return st, err
}

// reconcile is Reconcile; with wantPanes it also returns the live panes
// (listed anyway when a task is active), so callers that need them make
// one tmux call, not two.
func reconcile(ctx context.Context, env *Env, wantPanes bool) (*state.State, []tmuxctl.PaneInfo, error) {
	st, err := env.Store.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	var list []tmuxctl.PaneInfo
	listed := false
	listPanes := func() error {
		if listed {
			return nil
		}
		l, err := env.TC.ListPanes(ctx)
		if err != nil {
			return err
		}
		list, listed = l, true
		return nil
	}
	if wantPanes {
		if err := listPanes(); err != nil {
			return nil, nil, err
		}
	}
	changes, err := staleTasks(st, func() (map[string]tmuxctl.PaneInfo, error) {
		if err := listPanes(); err != nil {
			return nil, err
		}
		panes := map[string]tmuxctl.PaneInfo{}
		for _, p := range list {
			panes[p.ID] = p
		}
		return panes, nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(changes) == 0 {
		return st, list, nil
	}
	var dropped []*state.Message
	err = env.Store.Update(ctx, func(s *state.State) error {
		dropped = nil
		for _, c := range changes {
			t := s.Task(c.id)
			if t == nil || !t.Status.IsActive() || processAlive(t.SupervisorPID) {
				continue
			}
			_ = t.SetStatus(c.status, env.now(), c.reason)
			if c.status.IsTerminal() {
				dropped = append(dropped, dropQueue(s, c.id, env.now(), fmt.Sprintf("task %s ended %s before taking it", c.id, c.status))...)
			}
		}
		st = s
		return nil
	})
	env.journalDropped(ctx, dropped)
	for _, c := range changes {
		if t := st.Task(c.id); t != nil {
			env.journal(ctx, t, "reconcile", string(c.status)+": "+c.reason)
		}
	}
	return st, list, err
}

// change is a status reconcile records for a task nothing supervises.
type change struct {
	id     string
	status state.Status
	reason string
}

// staleTasks finds the active tasks whose supervisor is gone: orphaned
// (pane alive), exited (pane dead) or failed (pane gone too); a queued one
// whose dispatcher is gone fails (or, waiting for others, is orphaned).
// listPanes is called once, only if a task has a pane to look at.
func staleTasks(st *state.State, listPanes func() (map[string]tmuxctl.PaneInfo, error)) ([]change, error) {
	var changes []change
	var panes map[string]tmuxctl.PaneInfo
	for _, t := range st.Tasks {
		if !t.Status.IsActive() {
			continue
		}
		if t.Status == state.StatusQueued {
			// A queued task has the process that dispatched it or waits
			// for its dependencies, and no pane yet. Gone, a task that
			// waits for others can be resumed; one that was about to start
			// failed. (A record of an older runner without a process is
			// left alone.)
			if t.Tmux.Pane == "" && t.SupervisorPID > 0 && !processAlive(t.SupervisorPID) {
				if len(t.After) > 0 {
					changes = append(changes, change{t.ID, state.StatusOrphaned, fmt.Sprintf("supervisor %d is gone while %s (runner resume %s)", t.SupervisorPID, waitingReason(t.After), t.ID)})
				} else {
					changes = append(changes, change{t.ID, state.StatusFailed, fmt.Sprintf("the dispatching process %d is gone before the task started (dispatch it again)", t.SupervisorPID)})
				}
			}
			continue
		}
		if panes == nil {
			var err error
			if panes, err = listPanes(); err != nil {
				return nil, err
			}
		}
		p, paneOK := panes[t.Tmux.Pane]
		paneOK = paneOK && p.Session == t.Tmux.Session
		if paneOK && !p.Dead && p.PID > 0 {
			// An agent tmux has not reaped yet (see Monitor.Wait).
			if st, known, zombie := zombieExit(p.PID); zombie && known {
				p.Dead, p.DeadStatus = true, st
			}
		}
		supOK := processAlive(t.SupervisorPID)
		switch {
		case supOK:
			continue
		case t.Status == state.StatusNeedsInput && paneOK:
			continue
		case paneOK && !p.Dead:
			changes = append(changes, change{t.ID, state.StatusOrphaned, fmt.Sprintf("supervisor %d is gone; pane %s is alive (runner resume %s)", t.SupervisorPID, t.Tmux.Pane, t.ID)})
		case paneOK && p.Dead:
			changes = append(changes, change{t.ID, state.StatusExited, fmt.Sprintf("supervisor %d is gone; the agent exited with status %d", t.SupervisorPID, p.DeadStatus)})
		default:
			changes = append(changes, change{t.ID, state.StatusFailed, fmt.Sprintf("supervisor %d and pane %s are gone", t.SupervisorPID, t.Tmux.Pane)})
		}
	}
	return changes, nil
}

// PSOptions filters ListTasks.
type PSOptions struct {
	All     bool   // include finished tasks
	Project string // only this project: a name or a directory (see SelectProject)
}

// ListTasks reconciles and returns the tasks, newest first.
func ListTasks(ctx context.Context, env *Env, opts PSOptions) ([]*state.Task, error) {
	st, err := Reconcile(ctx, env)
	if err != nil {
		return nil, err
	}
	var ref ProjectRef
	if opts.Project != "" {
		if ref, err = SelectProject(st, opts.Project); err != nil {
			return nil, err
		}
	}
	all := st.TaskList()
	if opts.All {
		// Finished tasks the index no longer carries come from the
		// archive, as their index entries show them (Archived set).
		if all, err = st.AllTasks(); err != nil {
			return nil, err
		}
	}
	var out []*state.Task
	for _, t := range all {
		if opts.Project != "" && !ref.Has(t) {
			continue
		}
		if !opts.All && t.Status.IsTerminal() {
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.After(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// GetTask reconciles and returns one task by id or unique prefix.
func GetTask(ctx context.Context, env *Env, ref string) (*state.Task, error) {
	st, err := Reconcile(ctx, env)
	if err != nil {
		return nil, err
	}
	t, err := st.FindTask(ref)
	if err != nil {
		return nil, exit.Usagef("%v (see 'runner ps --all')", err)
	}
	return t, nil
}

// Cancel interrupts a task's agent with its profile's interrupt keys, marks
// it cancelled and stops its supervisor; with kill it also closes the
// task's window.
func Cancel(ctx context.Context, env *Env, ref string, kill bool) (*state.Task, error) {
	t, err := GetTask(ctx, env, ref)
	if err != nil {
		return nil, err
	}
	if t.Status.IsTerminal() && !kill {
		return t, exit.Usagef("task %s already ended (%s); use --kill to close its window", t.ID, t.Status)
	}
	reason := "cancelled by the user"
	if kill {
		reason += "; window closed"
	}
	if !t.Status.IsTerminal() {
		if err := env.finish(ctx, t.ID, state.StatusCancelled, reason, nil); err != nil {
			return t, err
		}
		// The supervisor is stopped below and will not notify: say it
		// here (the notify command, the tmux message).
		if nt, err := env.task(ctx, t.ID); err == nil && nt.Status == state.StatusCancelled {
			var set RunSettings
			_ = json.Unmarshal(nt.Settings, &set)
			env.notify(ctx, nt, set)
		}
	}
	if t.SupervisorPID != os.Getpid() && processAlive(t.SupervisorPID) {
		_ = syscall.Kill(t.SupervisorPID, syscall.SIGTERM)
	}
	if kill {
		// The whole process tree, not only the pane's program: children
		// that left its process group or session too (see killTask).
		if nt, err := env.task(ctx, t.ID); err == nil {
			t = nt
		}
		if err := env.killTask(ctx, t); err != nil {
			return t, err
		}
	} else if t.Tmux.Pane != "" {
		if prof, err := profile.FindProfile(env.Profiles, t.Agent); err == nil && len(prof.InterruptKeys) > 0 {
			if err := env.TC.SendKeys(ctx, t.Tmux.Pane, prof.InterruptKeys...); err != nil && !errors.Is(err, tmuxctl.ErrNotFound) && !errors.Is(err, tmuxctl.ErrPaneDead) {
				return t, err
			}
		}
	}
	return env.task(ctx, t.ID)
}

// SendRequest is one `runner send`.
type SendRequest struct {
	Ref      string
	Text     string
	Detach   bool
	Settings *RunSettings // overrides for this turn (nil: the task's own)
}

// Send delivers a follow-up prompt to a task whose agent is ready (its last
// turn ended) and supervises that turn like dispatch.
func Send(ctx context.Context, env *Env, req SendRequest) (*state.Task, error) {
	if strings.TrimSpace(req.Text) == "" {
		return nil, exit.Usagef("the text is empty")
	}
	t, err := GetTask(ctx, env, req.Ref)
	if err != nil {
		return nil, err
	}
	if err := sendable(ctx, env, t); err != nil {
		return t, err
	}
	prof, err := profile.FindProfile(env.Profiles, t.Agent)
	if err != nil {
		return t, err
	}
	if err := CheckTaskSize(prof, req.Text); err != nil {
		return t, err
	}
	var set RunSettings
	_ = json.Unmarshal(t.Settings, &set)
	if req.Settings != nil {
		set = *req.Settings
	}
	if info, err := env.TC.Pane(ctx, t.Tmux.Pane); t.Tmux.Pane == "" || err != nil || info.Dead || !t.Reclaimed.IsZero() || info.WindowName != t.ID {
		// The window was closed (gc, cancel --kill) or the agent quit:
		// start it again on its conversation. (A pane of another name
		// is not the task's: pane ids start again with a new server.)
		own := t.Tmux.Pane != "" && err == nil && info.WindowName == t.ID
		if t, err = relaunch(ctx, env, t, prof, set, own); err != nil {
			return t, err
		}
	}
	if err := atPrompt(ctx, env, t, prof); err != nil {
		return t, err
	}
	set.Detached = req.Detach
	if err := reopen(ctx, env, t, set, req.Text); err != nil {
		return t, err
	}
	sup := &supervisor{env: env, id: t.ID, prof: prof, set: set, pane: t.Tmux.Pane,
		mon: &Monitor{TC: env.TC, Pane: t.Tmux.Pane, Profile: prof, Transcript: t.Transcript,
			Events: env.Store.TaskFile("events", t.ID), Died: env.Store.PaneDiedFile(), Settle: set.settleFor(prof), Idle: set.Idle}}
	if err := sup.deliver(ctx, req.Text, false); err != nil {
		return t, err
	}
	if req.Detach {
		if _, err := env.StartSupervisor(t.ID, nil); err != nil {
			return t, err
		}
		return env.task(ctx, t.ID)
	}
	timeout := set.Timeout
	if timeout <= 0 {
		timeout = DefaultTaskTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = sup.concludeAll(ctx, tctx, sup.monitorTurn(tctx, time.Time{}))
	nt, _ := env.task(context.WithoutCancel(ctx), t.ID)
	if nt == nil {
		nt = t
	}
	return nt, err
}

// sendable refuses a send from inside a task (an agent talks to other
// tasks through their message queues, where hops and caps stop loops; a
// prompt typed by send is the user's) and a send to a task that is not
// between turns.
func sendable(ctx context.Context, env *Env, t *state.Task) error {
	if st, err := env.Store.Read(ctx); err == nil {
		if caller := callerTask(ctx, env, st); caller != "" {
			return exit.Usagef("runner send is for the user; from inside task %s use 'runner msg %s TEXT' (delivered when %s is ready, with loop protection)", caller, t.ID, t.ID)
		}
	}
	switch t.Status {
	case state.StatusReady:
		if t.SupervisorPID != os.Getpid() && processAlive(t.SupervisorPID) {
			return exit.Usagef("task %s is taking its messages (supervisor %d): wait for its turn to end ('runner wait %s') before sending", t.ID, t.SupervisorPID, t.ID)
		}
	case state.StatusDone, state.StatusFailed, state.StatusTimeout, state.StatusCancelled:
	case state.StatusRunning, state.StatusStarting, state.StatusQueued:
		return exit.Usagef("task %s is %s: wait for its turn to end ('runner wait %s') before sending", t.ID, t.Status, t.ID)
	default:
		return exit.Usagef("task %s is %s: it cannot take a prompt (see 'runner status %s')", t.ID, t.Status, t.ID)
	}
	return nil
}

// atPrompt checks that the task's agent shows its prompt. A turn the
// agent's hook ended may still be drawing its prompt back: that is waited
// for (briefly) rather than refused.
func atPrompt(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile) error {
	screen, err := env.TC.CaptureScreen(ctx, t.Tmux.Pane)
	if err != nil {
		return err
	}
	if d := profile.Detect(prof, screen); d.State == profile.StateBusy && t.Status == state.StatusDone {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		mon := &Monitor{TC: env.TC, Pane: t.Tmux.Pane, Profile: prof, Transcript: t.Transcript,
			Died: env.Store.PaneDiedFile(), Settle: prof.Settle.Duration}
		obs, werr := mon.Wait(wctx, GoalReady, time.Now())
		cancel()
		if werr == nil && !obs.Dead {
			screen = obs.Screen
		}
	}
	if d := profile.Detect(prof, screen); d.State != profile.StateReady && d.State != profile.StateError {
		return exit.Usagef("task %s: its agent is not at its prompt (it looks %s); attach with 'runner attach %s'", t.ID, d.State, t.ID)
	}
	return nil
}

// reopen opens the task for a new turn from the user, owned by this
// process, unless something (a message delivery) took the agent since t
// was read.
func reopen(ctx context.Context, env *Env, t *state.Task, set RunSettings, text string) error {
	raw, _ := json.Marshal(set)
	return env.Store.Update(ctx, func(s *state.State) error {
		x := s.Task(t.ID)
		if x == nil {
			return exit.Usagef("task %s was pruned", t.ID)
		}
		if x.Status != t.Status && x.Status != state.StatusDone {
			return exit.Usagef("task %s is %s now: wait for its turn to end ('runner wait %s') before sending", t.ID, x.Status, t.ID)
		}
		// A prompt from the user: what the agent sends now is not a reply
		// to a message.
		x.Handling, x.HandlingHops = nil, 0
		x.Settings = raw
		x.Ended = time.Time{}
		x.ExitCode = nil
		x.Answer = "" // the answer is the new turn's, once it ends
		x.SupervisorPID = os.Getpid()
		_ = x.SetStatus(state.StatusReady, env.now(), "follow-up prompt: "+taskTitle(text))
		return nil
	})
}

// relaunch starts a task's agent again, in a new window, on the
// conversation it had (its profile's resume arguments and the task's
// AgentSession), and waits until it is ready. hasPane says the old (dead)
// window is still there: it is closed first.
func relaunch(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile, set RunSettings, hasPane bool) (*state.Task, error) {
	why := fmt.Sprintf("its agent's pane %s is gone or dead", t.Tmux.Pane)
	if !t.Reclaimed.IsZero() {
		why = fmt.Sprintf("its agent's window was closed by gc or cancel --kill at %s", t.Reclaimed.Local().Format(time.DateTime))
	}
	switch {
	case len(prof.Resume) == 0:
		return t, exit.Usagef("task %s: %s, and agent %s cannot resume a conversation (its profile has no \"resume\" arguments); dispatch a new task", t.ID, why, prof.Name)
	case t.AgentSession == "":
		return t, exit.Usagef("task %s: %s, and the agent's session id was never seen, so its conversation cannot be resumed; dispatch a new task", t.ID, why)
	case set.Start == nil || len(set.Start.Argv) == 0:
		return t, exit.Usagef("task %s: %s, and its record has no launch command (dispatched by an older runner); dispatch a new task", t.ID, why)
	}
	if hasPane {
		if err := env.TC.KillWindow(ctx, t.Tmux.Pane); err != nil && !errors.Is(err, tmuxctl.ErrNotFound) {
			return t, err
		}
	}
	spec := *set.Start
	spec.Argv = prof.ResumeArgv(set.Start.Argv, t.AgentSession)
	if err := env.Store.Update(ctx, func(s *state.State) error {
		x := s.Task(t.ID)
		if x == nil {
			return exit.Usagef("task %s was pruned", t.ID)
		}
		if x.Status != t.Status {
			return exit.Usagef("task %s is %s now: wait for its turn to end ('runner wait %s') before sending", t.ID, x.Status, t.ID)
		}
		x.Reclaimed, x.Ended, x.ExitCode = time.Time{}, time.Time{}, nil
		x.SupervisorPID = os.Getpid()
		return x.SetStatus(state.StatusStarting, env.now(), "follow-up prompt: resuming agent session "+t.AgentSession)
	}); err != nil {
		return t, err
	}
	env.say("task %s: starting %s again on session %s", t.ID, prof.Name, t.AgentSession)
	if err := env.launch(ctx, t, prof, &spec); err != nil {
		_ = env.finish(context.WithoutCancel(ctx), t.ID, state.StatusFailed, "resume failed: "+err.Error(), nil)
		return t, err
	}
	nt, err := env.task(ctx, t.ID)
	if err != nil {
		return t, err
	}
	sup := &supervisor{env: env, id: t.ID, prof: prof, set: set, pane: nt.Tmux.Pane,
		mon: &Monitor{TC: env.TC, Pane: nt.Tmux.Pane, Profile: prof, Transcript: nt.Transcript,
			Events: env.Store.TaskFile("events", t.ID), Died: env.Store.PaneDiedFile(), Settle: set.settleFor(prof), Idle: set.Idle}}
	if err := sup.waitReady(ctx); err != nil {
		err = sup.concludeAll(ctx, ctx, err)
		if x, _ := env.task(context.WithoutCancel(ctx), t.ID); x != nil {
			nt = x
		}
		return nt, err
	}
	return env.task(ctx, t.ID)
}

// resumeReason marks the status change made by Resume; the new supervisor
// restarts the task's clock from it.
const resumeReason = "resumed: a new supervisor is starting"

// Resume starts a new detached supervisor for an orphaned task (or one left
// waiting for input) whose pane is alive.
func Resume(ctx context.Context, env *Env, ref string) (*state.Task, int, error) {
	t, err := GetTask(ctx, env, ref)
	if err != nil {
		return nil, 0, err
	}
	if t.Status != state.StatusOrphaned && t.Status != state.StatusNeedsInput {
		if processAlive(t.SupervisorPID) {
			return t, 0, exit.Usagef("task %s is %s and supervised by process %d; nothing to resume", t.ID, t.Status, t.SupervisorPID)
		}
		return t, 0, exit.Usagef("task %s is %s; only orphaned tasks and tasks waiting for input can be resumed", t.ID, t.Status)
	}
	if processAlive(t.SupervisorPID) && t.SupervisorPID != os.Getpid() {
		return t, 0, exit.Usagef("task %s is supervised by process %d already", t.ID, t.SupervisorPID)
	}
	if t.Tmux.Pane == "" && t.Status == state.StatusOrphaned && len(t.After) > 0 {
		return resumeQueued(ctx, env, t)
	}
	info, err := env.TC.Pane(ctx, t.Tmux.Pane)
	if err != nil || info.Dead {
		return t, 0, exit.Usagef("task %s: its pane %s is gone or dead; it cannot be resumed", t.ID, t.Tmux.Pane)
	}
	var set RunSettings
	_ = json.Unmarshal(t.Settings, &set)
	set.Detached = true
	raw, _ := json.Marshal(set)
	wasOrphaned := t.Status == state.StatusOrphaned
	if err := env.update(ctx, t.ID, func(x *state.Task) {
		x.Settings = raw
		// An orphaned task is supervised again from now on: a `wait`
		// right after resume must not see the old orphaned status and end.
		if wasOrphaned && x.Status == state.StatusOrphaned {
			next := state.StatusRunning
			if x.Delivery == "" {
				next = state.StatusStarting
			}
			_ = x.SetStatus(next, env.now(), resumeReason)
		}
	}); err != nil {
		return t, 0, err
	}
	pid, err := env.StartSupervisor(t.ID, nil)
	if err != nil {
		if wasOrphaned {
			_ = env.setStatus(context.WithoutCancel(ctx), t.ID, state.StatusOrphaned, "resume failed: "+err.Error(), nil)
		}
		return t, 0, err
	}
	t, err = env.task(ctx, t.ID)
	return t, pid, err
}

// resumeQueued puts a task orphaned while waiting for its dependencies back
// in the queue and starts a detached supervisor that waits on.
func resumeQueued(ctx context.Context, env *Env, t *state.Task) (*state.Task, int, error) {
	var set RunSettings
	_ = json.Unmarshal(t.Settings, &set)
	set.Detached = true
	raw, _ := json.Marshal(set)
	if err := env.update(ctx, t.ID, func(x *state.Task) {
		x.Settings = raw
		if x.Status == state.StatusOrphaned {
			_ = x.SetStatus(state.StatusQueued, env.now(), "resumed: "+waitingReason(x.After))
		}
	}); err != nil {
		return t, 0, err
	}
	pid, err := env.StartSupervisor(t.ID, nil)
	if err != nil {
		_ = env.setStatus(context.WithoutCancel(ctx), t.ID, state.StatusOrphaned, "resume failed: "+err.Error(), nil)
		return t, 0, err
	}
	t, err = env.task(ctx, t.ID)
	return t, pid, err
}

// WaitOptions controls WaitTasks.
type WaitOptions struct {
	Any bool // return when the first task ends
	// UntilInput also ends the wait when a task needs input.
	UntilInput bool
}

// settled reports whether a task is done waiting for: terminal, orphaned,
// or (with untilInput) waiting for input.
func settled(t *state.Task, untilInput bool) bool {
	return t.Status.IsTerminal() || t.Status == state.StatusOrphaned || (untilInput && t.Status == state.StatusNeedsInput)
}

// WaitTasks blocks until the tasks (all, or with Any the first) have ended,
// watching the state directory (no polling), and returns them.
func WaitTasks(ctx context.Context, env *Env, refs []string, opts WaitOptions) ([]*state.Task, error) {
	st, err := Reconcile(ctx, env)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range refs {
		t, err := st.FindTask(r)
		if err != nil {
			return nil, exit.Usagef("%v (see 'runner ps --all')", err)
		}
		ids = append(ids, t.ID)
	}
	return waitIDs(ctx, env, st, ids, opts)
}

// waitIDs is the wait loop of WaitTasks and WaitAll: st is a fresh read.
func waitIDs(ctx context.Context, env *Env, st *state.State, ids []string, opts WaitOptions) ([]*state.Task, error) {
	changes, err := env.Store.Watch(ctx)
	if err != nil {
		return nil, err
	}
	safety := time.NewTicker(5 * time.Second)
	defer safety.Stop()
	for {
		var out []*state.Task
		done := 0
		for _, id := range ids {
			t := st.Task(id)
			if t == nil {
				return nil, exit.Usagef("task %s was pruned while waiting", id)
			}
			out = append(out, t)
			if settled(t, opts.UntilInput) {
				done++
			}
		}
		if done == len(ids) || (opts.Any && done > 0) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-changes:
			st, err = env.Store.Read(ctx)
		case <-safety.C:
			// A supervisor that died leaves no write behind: reconcile.
			st, err = Reconcile(ctx, env)
		}
		if err != nil {
			return nil, err
		}
	}
}

// AttachTarget returns the tmux target for a task or a project: the task's
// window, or the project's session.
func AttachTarget(ctx context.Context, env *Env, ref string) (string, error) {
	st, err := env.Store.Read(ctx)
	if err != nil {
		return "", err
	}
	if t, err := st.FindTask(ref); err == nil {
		if t.Tmux.Pane == "" {
			return "", exit.Usagef("task %s has no pane yet", t.ID)
		}
		return t.Tmux.Pane, nil
	}
	for _, t := range st.Tasks {
		if t.Project == ref && t.Tmux.Session != "" {
			return tmuxctl.SessionTarget(t.Tmux.Session), nil
		}
	}
	if p, ok := st.Projects[ref]; ok {
		return tmuxctl.SessionTarget(SessionName(p.Name, p.Dir)), nil
	}
	return "", exit.Usagef("%q is neither a task (see 'runner ps --all') nor a project with a session", ref)
}

// Age formats how long ago t was, for tables.
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}

// FirstLine is the first line of a task's text, clipped for tables.
func FirstLine(s string, n int) string { return textutil.ClipRunes(textutil.FirstLine(s), n) }

// LastLines returns the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
