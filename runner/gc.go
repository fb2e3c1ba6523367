package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/runner/exit"

	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// GCOptions controls GC.
type GCOptions struct {
	// OlderThan: only tasks that ended at least this long ago.
	OlderThan time.Duration
	// DryRun reports what would be closed and ended, and changes nothing.
	DryRun bool
	// QuitWait is how long agents get to exit after their quit keys (and
	// print their resume hint); 0 means DefaultQuitWait.
	QuitWait time.Duration
	// Grace is how long processes get between SIGTERM and SIGKILL; 0
	// means DefaultKillGrace.
	Grace time.Duration
	// NoWait: when another gc runs, return ErrGCBusy instead of waiting
	// for it (the background gc of close_after).
	NoWait bool
}

// ErrGCBusy is returned with GCOptions.NoWait when another gc runs (exit 5).
var ErrGCBusy = fmt.Errorf("another runner gc is running: %w", state.ErrBusy)

// Defaults of GCOptions.
const (
	DefaultQuitWait  = 5 * time.Second
	DefaultKillGrace = 3 * time.Second
)

// GCTask is one task whose window gc closed and whose processes it ended
// (with DryRun: would).
type GCTask struct {
	ID      string       `json:"id"`
	Status  state.Status `json:"status,omitempty"` // empty when the task's record was pruned
	Ended   time.Time    `json:"ended,omitzero"`
	Session string       `json:"session,omitempty"`
	Pane    string       `json:"pane,omitempty"`
	// WindowClosed says the task's window was closed (it had one).
	WindowClosed bool `json:"window_closed"`
	// AgentSession is the agent's conversation id, and Resumable says
	// whether `runner send` can start the agent again on it.
	AgentSession string `json:"agent_session,omitempty"`
	Resumable    bool   `json:"resumable"`
	// AgentQuit says the agent exited on its profile's quit keys (and
	// printed its resume hint) before the window was closed.
	AgentQuit bool `json:"agent_quit,omitempty"`
	// Processes lists the processes ended (with DryRun: found; Signal
	// empty).
	Processes []proctree.Ended `json:"processes"`
	// Pruned: the task's record is gone (retention); only its window and
	// processes were left.
	Pruned bool `json:"pruned,omitempty"`
}

// GCSkip is a finished task gc left alone, and why.
type GCSkip struct {
	ID     string `json:"id"`
	Pane   string `json:"pane,omitempty"`
	Reason string `json:"reason"`
}

// GCResult is what GC did.
type GCResult struct {
	DryRun         bool     `json:"dry_run"`
	Tasks          []GCTask `json:"tasks"`
	Skipped        []GCSkip `json:"skipped"`
	SessionsClosed []string `json:"sessions_closed"`
}

// Processes counts the processes in r.
func (r *GCResult) Processes() int {
	n := 0
	for _, t := range r.Tasks {
		n += len(t.Processes)
	}
	return n
}

// gcLockKey names gc's lock among the project locks (a project name cannot
// start with '_').
const gcLockKey = "_gc"

// GC closes the windows of finished tasks that ended at least
// opts.OlderThan ago (and the windows left by tasks whose records were
// pruned) and ends every process those tasks started. A window that a
// tmux client is showing is never closed; that task is skipped. Before a
// window closes, the agent is asked to quit (its profile's quit keys) so
// that it prints its session id, which is recorded for `runner send` to
// resume the conversation.
func GC(ctx context.Context, env *Env, opts GCOptions) (*GCResult, error) {
	if opts.OlderThan < 0 {
		return nil, exit.Usagef("--older-than must not be negative (got %v)", opts.OlderThan)
	}
	if !opts.DryRun {
		lock, err := env.Store.LockProject(ctx, gcLockKey, !opts.NoWait)
		if errors.Is(err, state.ErrBusy) {
			return nil, ErrGCBusy
		}
		if err != nil {
			return nil, fmt.Errorf("gc: wait for another gc to finish: %w", err)
		}
		defer lock.Unlock()
	}
	st, panes, err := reconcile(ctx, env, true)
	if err != nil {
		return nil, err
	}
	clients, err := env.TC.Clients(ctx)
	if err != nil {
		return nil, err
	}
	byPane := map[string]tmuxctl.PaneInfo{}
	for _, p := range panes {
		byPane[p.ID] = p
	}
	res := &GCResult{DryRun: opts.DryRun, Tasks: []GCTask{}, Skipped: []GCSkip{}, SessionsClosed: []string{}}
	targets := env.gcTargets(ctx, st, panes, clients, opts.OlderThan, res)
	protect := protectedPIDs(st, byPane)
	if !opts.DryRun {
		if targets, err = env.claimTargets(ctx, targets); err != nil {
			return nil, err
		}
		env.quitAgents(ctx, targets, opts.QuitWait)
	}
	pick, owner := env.taskPicker(ctx, targets, protect, true)
	if opts.DryRun {
		tab, err := proctree.Read()
		if err != nil && !errors.Is(err, proctree.ErrUnsupported) {
			return nil, err
		}
		var found []proctree.Ended
		if tab != nil {
			for _, pid := range pick(tab) {
				found = append(found, proctree.Ended{PID: pid, Comm: tab.Procs[pid].Comm})
			}
		}
		targets = attribute(targets, found, owner)
	} else {
		if targets, err = env.endAndClose(ctx, targets, pick, owner, opts.Grace); err != nil {
			return nil, err
		}
	}
	sessions := map[string]bool{}
	for _, g := range targets {
		prof, _ := profile.FindProfile(env.Profiles, agentOf(g.task))
		g.item.Resumable = prof != nil && len(prof.Resume) > 0 && g.item.AgentSession != ""
		if g.item.Processes == nil {
			g.item.Processes = []proctree.Ended{}
		}
		if g.pane == nil && len(g.item.Processes) == 0 {
			continue // nothing was left of it
		}
		if g.pane != nil {
			sessions[g.pane.Session] = true
		}
		res.Tasks = append(res.Tasks, g.item)
	}
	if opts.DryRun {
		return res, nil
	}
	if err := env.recordReclaimed(ctx, targets, "gc"); err != nil {
		return res, err
	}
	// Sessions left empty: tmux closes a session with its last window.
	if left, err := env.TC.ListPanes(ctx); err == nil {
		for _, p := range left {
			delete(sessions, p.Session)
		}
		for s := range sessions {
			res.SessionsClosed = append(res.SessionsClosed, s)
		}
		slices.Sort(res.SessionsClosed)
	}
	return res, nil
}

// gcTargets lists what gc reclaims: the finished tasks that ended at least
// olderThan ago, and the windows left by tasks whose records were pruned
// (named after a task id, marked with this state directory). A window a
// tmux client shows is skipped (in res.Skipped).
func (env *Env) gcTargets(ctx context.Context, st *state.State, panes []tmuxctl.PaneInfo, clients []tmuxctl.ClientInfo, olderThan time.Duration, res *GCResult) []*gcTarget {
	shown := map[string]string{} // window id → client tty
	for _, c := range clients {
		shown[c.WindowID] = c.TTY
	}
	byPane := map[string]tmuxctl.PaneInfo{}
	for _, p := range panes {
		byPane[p.ID] = p
	}
	now := env.now()
	var targets []*gcTarget
	claimed := map[string]bool{} // panes that belong to a task in the state
	for _, t := range st.TaskList() {
		if p, ok := byPane[t.Tmux.Pane]; ok && ownPane(t, p) {
			claimed[t.Tmux.Pane] = true
		}
		if !t.Status.IsTerminal() || now.Sub(t.Ended) < olderThan {
			continue
		}
		g := &gcTarget{task: t, item: GCTask{ID: t.ID, Status: t.Status, Ended: t.Ended, Session: t.Tmux.Session, AgentSession: t.AgentSession}}
		if p, ok := byPane[t.Tmux.Pane]; ok && ownPane(t, p) {
			if tty, ok := shown[p.WindowID]; ok {
				res.Skipped = append(res.Skipped, GCSkip{ID: t.ID, Pane: p.ID, Reason: "a tmux client (" + tty + ") is showing its window"})
				continue
			}
			g.pane, g.item.Pane = &p, p.ID
		}
		targets = append(targets, g)
	}
	for _, p := range panes {
		if claimed[p.ID] || !state.ValidTaskID(p.WindowName) || st.Task(p.WindowName) != nil {
			continue
		}
		if v, err := env.TC.ShowOption(ctx, p.ID, stateDirOption); err != nil || v != env.Store.Dir() {
			continue
		}
		if tty, ok := shown[p.WindowID]; ok {
			res.Skipped = append(res.Skipped, GCSkip{ID: p.WindowName, Pane: p.ID, Reason: "a tmux client (" + tty + ") is showing its window"})
			continue
		}
		p := p
		targets = append(targets, &gcTarget{pane: &p, item: GCTask{ID: p.WindowName, Session: p.Session, Pane: p.ID, Pruned: true}})
	}
	return targets
}

// claimTargets marks the targets' tasks reclaimed in one state update
// before anything is ended, and drops those that started again since they
// were read (a send, a message): a task being reclaimed is not restarted
// behind gc's back, and a restarted one is not reclaimed.
func (env *Env) claimTargets(ctx context.Context, targets []*gcTarget) ([]*gcTarget, error) {
	now := env.now()
	var keep []*gcTarget
	err := env.Store.Update(ctx, func(s *state.State) error {
		keep = keep[:0]
		for _, g := range targets {
			if g.task != nil {
				t := s.Task(g.task.ID)
				if t == nil || t.Status != g.task.Status || !t.Ended.Equal(g.task.Ended) || t.Tmux.Pane != g.task.Tmux.Pane {
					continue
				}
				if t.Reclaimed.IsZero() {
					t.Reclaimed = now
				}
			}
			keep = append(keep, g)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gc: mark the finished tasks reclaimed: %w", err)
	}
	return keep, nil
}

// ownPane says whether pane p (found by the task's pane id) is the task's
// own: pane ids start again at %0 when the tmux server restarts, so a
// reclaimed task's old id can name another task's pane now. A task's
// window is named after its id.
func ownPane(t *state.Task, p tmuxctl.PaneInfo) bool {
	return p.Session == t.Tmux.Session && p.WindowName == t.ID
}

// stateDirOption is the pane option naming the state directory of the
// task that runs in the pane (gc closes only its own windows).
const stateDirOption = "@runner_state"

// gcTarget is a task (or a pruned task's window) being reclaimed.
type gcTarget struct {
	task *state.Task       // nil for a pruned task
	pane *tmuxctl.PaneInfo // its live window, if any
	item GCTask
}

func agentOf(t *state.Task) string {
	if t == nil {
		return ""
	}
	return t.Agent
}

// protectedPIDs are processes gc never ends, with what runs below them:
// the panes and supervisors of active tasks (taskPicker adds the tmux
// server itself).
func protectedPIDs(st *state.State, panes map[string]tmuxctl.PaneInfo) []int {
	var out []int
	for _, t := range st.Tasks {
		if t.Status.IsTerminal() {
			continue
		}
		if t.SupervisorPID > 0 {
			out = append(out, t.SupervisorPID)
		}
		if p, ok := panes[t.Tmux.Pane]; ok && p.PID > 0 {
			out = append(out, p.PID)
		}
	}
	return out
}

// quitAgents asks the live agents of targets to quit with their profile's
// quit keys, all at once, waits up to wait for their panes to die, and
// reads each screen for the agent's session id (a dead pane keeps its last
// screen). A pane that was dead already is only read.
func (env *Env) quitAgents(ctx context.Context, targets []*gcTarget, wait time.Duration) {
	if wait <= 0 {
		wait = DefaultQuitWait
	}
	var wg sync.WaitGroup
	for _, g := range targets {
		if g.pane == nil || g.task == nil {
			continue
		}
		prof, err := profile.FindProfile(env.Profiles, g.task.Agent)
		if err != nil || len(prof.SessionID) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, quit := quitAndRead(ctx, env.TC, prof, g.pane, wait)
			if id != "" {
				g.item.AgentSession = id
			}
			g.item.AgentQuit = quit
		}()
	}
	wg.Wait()
}

// quitAndRead sends prof's quit keys to a live pane and waits until it is
// dead (each round of keys waits up to wait/2), then returns the session
// id on its screen and whether the agent quit. Each key after the first
// waits for the screen to answer the one before (a loaded CLI may take a
// moment to show "press Ctrl-C again"; two presses read as one would not
// exit it); a CLI still alive after the keys gets them once more.
func quitAndRead(ctx context.Context, tc *tmuxctl.Client, prof *profile.Profile, pane *tmuxctl.PaneInfo, wait time.Duration) (session string, quit bool) {
	dead := func() bool {
		info, err := tc.Pane(ctx, pane.ID)
		return err != nil || info.Dead
	}
	if !pane.Dead && len(prof.QuitKeys) > 0 {
	rounds:
		for round := 0; round < 2; round++ {
			for i, k := range prof.QuitKeys {
				before, _ := tc.CaptureScreen(ctx, pane.ID)
				if err := tc.SendKeys(ctx, pane.ID, k); err != nil {
					break rounds
				}
				if i == len(prof.QuitKeys)-1 {
					break
				}
				// The next key once the screen answered this one.
				for until := time.Now().Add(2 * time.Second); time.Now().Before(until); {
					if sleepCtx(ctx, profile.QuitGap/3) != nil {
						break rounds
					}
					if now, err := tc.CaptureScreen(ctx, pane.ID); err != nil || now != before {
						break
					}
				}
				if sleepCtx(ctx, profile.QuitGap/3) != nil {
					break rounds
				}
			}
			for until := time.Now().Add(wait / 2); time.Now().Before(until); {
				if dead() {
					quit = true
					break rounds
				}
				if sleepCtx(ctx, 100*time.Millisecond) != nil {
					break rounds
				}
			}
		}
	}
	screen, err := tc.Capture(ctx, pane.ID, tmuxctl.CaptureOptions{Lines: 80, Join: true})
	if err != nil {
		return "", quit
	}
	return prof.FindSession(screen), quit
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// taskPicker chooses the processes of targets in a process table: the
// descendants of each live pane's process and the members of its session,
// every process whose environment names this state directory and one of
// the targets (or, with pruned, a task the state no longer has), and all
// that runs below those; never a protected process or anything below one,
// nor the tmux server, nor a target that is active again in a fresh read
// of the state. A state that cannot be read picks nothing.
// owner maps each chosen pid to its task id.
func (env *Env) taskPicker(ctx context.Context, targets []*gcTarget, protect []int, pruned bool) (proctree.Picker, map[int]string) {
	owner := map[int]string{}
	server, _ := env.TC.ServerPID(ctx)
	ids := map[string]bool{}
	for _, g := range targets {
		ids[g.item.ID] = true
	}
	dir := env.Store.Dir()
	pick := func(t *proctree.Table) []int {
		// owner keeps the pids of earlier calls: End reports processes
		// that are gone by its last call.
		safe := map[int]bool{}
		for _, pid := range t.Descendants(protect...) {
			safe[pid] = true
		}
		if server > 0 {
			// The server itself, not its panes: a server started by a
			// runner command in a task's pane inherits the task's
			// variables.
			safe[server] = true
		}
		// Read after the table: a task dispatched since the caller's read
		// is in the state before its agent starts, and a target started
		// again meanwhile (send resumes it) is active in it.
		st, err := env.Store.Read(ctx)
		if err != nil {
			return nil
		}
		known := st.Tasks
		live := func(id string) bool { t := known[id]; return t != nil && !t.Status.IsTerminal() }
		for pid := range t.Procs {
			if v, ok := t.Env(pid, "RUNNER_STATE_DIR"); !ok || v != dir {
				continue
			}
			id, _ := t.Env(pid, "RUNNER_TASK_ID")
			switch {
			case id == "":
			case ids[id] && !live(id):
				owner[pid] = id
			case pruned && state.ValidTaskID(id) && known[id] == nil:
				owner[pid] = id
			}
		}
		for _, g := range targets {
			if g.pane == nil || g.pane.PID <= 0 || live(g.item.ID) {
				continue
			}
			if v, _ := t.Env(g.pane.PID, "RUNNER_TASK_ID"); v != g.item.ID {
				continue // the pane's process is gone (its pid may be another's now)
			}
			for _, pid := range append(t.Descendants(g.pane.PID), t.Session(g.pane.PID)...) {
				if _, ok := owner[pid]; !ok {
					owner[pid] = g.item.ID
				}
			}
		}
		var roots []int
		for pid := range owner {
			roots = append(roots, pid)
		}
		slices.Sort(roots)
		for _, r := range roots {
			for _, pid := range t.Descendants(r) {
				if _, ok := owner[pid]; !ok {
					owner[pid] = owner[r]
				}
			}
		}
		var out []int
		for pid := range owner {
			if safe[pid] {
				delete(owner, pid)
				continue
			}
			out = append(out, pid)
		}
		slices.Sort(out)
		return out
	}
	return pick, owner
}

// endAndClose ends the processes pick chooses (the tree is still whole, so
// nothing is reparented before it is found), then closes the targets'
// windows.
func (env *Env) endAndClose(ctx context.Context, targets []*gcTarget, pick proctree.Picker, owner map[int]string, grace time.Duration) ([]*gcTarget, error) {
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	ended, err := proctree.End(ctx, pick, grace)
	if err != nil && !errors.Is(err, proctree.ErrUnsupported) {
		return targets, fmt.Errorf("end the processes of finished tasks: %w", err)
	}
	targets = attribute(targets, ended, owner)
	var errs []string
	for _, g := range targets {
		if g.pane == nil {
			continue
		}
		if err := env.TC.KillWindow(ctx, g.pane.ID); err != nil && !errors.Is(err, tmuxctl.ErrNotFound) {
			errs = append(errs, err.Error())
			continue
		}
		g.item.WindowClosed = true
	}
	if len(errs) > 0 {
		return targets, fmt.Errorf("close windows of finished tasks: %s (check the tmux server: runner tmux list)", strings.Join(errs, "; "))
	}
	return targets, nil
}

// attribute adds each process to its task's target; a process of a task
// that is no target (its record was pruned, its window gone) gets a target
// of its own.
func attribute(targets []*gcTarget, procs []proctree.Ended, owner map[int]string) []*gcTarget {
	byID := map[string]*gcTarget{}
	for _, g := range targets {
		byID[g.item.ID] = g
	}
	for _, e := range procs {
		id := owner[e.PID]
		g := byID[id]
		if g == nil {
			g = &gcTarget{item: GCTask{ID: id, Pruned: true}}
			byID[id] = g
			targets = append(targets, g)
		}
		g.item.Processes = append(g.item.Processes, e)
	}
	return targets
}

// recordReclaimed marks the targets reclaimed (and records the agent's
// session id found on their screens) and journals it.
func (env *Env) recordReclaimed(ctx context.Context, targets []*gcTarget, by string) error {
	now := env.now()
	err := env.Store.Update(ctx, func(s *state.State) error {
		for _, g := range targets {
			if g.task == nil {
				continue
			}
			t := s.Task(g.task.ID)
			if t == nil {
				continue
			}
			if !t.Status.IsTerminal() {
				continue // started again meanwhile
			}
			if g.item.AgentSession != "" {
				t.AgentSession = g.item.AgentSession
			}
			if t.Reclaimed.IsZero() {
				t.Reclaimed = now
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: record the reclaimed tasks: %w", by, err)
	}
	for _, g := range targets {
		if g.pane == nil && len(g.item.Processes) == 0 {
			continue
		}
		msg := fmt.Sprintf("window %s closed: %v, %d process(es) ended", g.item.Pane, g.item.WindowClosed, len(g.item.Processes))
		if g.item.AgentSession != "" {
			msg += "; agent session " + g.item.AgentSession
		}
		t := g.task
		if t == nil {
			t = &state.Task{ID: g.item.ID}
		}
		env.journal(ctx, t, by, msg)
	}
	return nil
}

// killTask ends a task's processes and closes its window at once (cancel
// --kill): no quit keys, but the session id on the screen is recorded.
func (env *Env) killTask(ctx context.Context, t *state.Task) error {
	g := &gcTarget{task: t, item: GCTask{ID: t.ID, Status: t.Status, Pane: t.Tmux.Pane, AgentSession: t.AgentSession}}
	var protect []int
	if st, panes, err := reconcile(ctx, env, true); err == nil {
		byPane := map[string]tmuxctl.PaneInfo{}
		for _, p := range panes {
			byPane[p.ID] = p
		}
		if p, ok := byPane[t.Tmux.Pane]; ok && ownPane(t, p) {
			g.pane = &p
			if prof, err := profile.FindProfile(env.Profiles, t.Agent); err == nil {
				if screen, err := env.TC.Capture(ctx, p.ID, tmuxctl.CaptureOptions{Lines: 80, Join: true}); err == nil {
					if id := prof.FindSession(screen); id != "" {
						g.item.AgentSession = id
					}
				}
			}
		}
		protect = protectedPIDs(st, byPane)
		protect = slices.DeleteFunc(protect, func(pid int) bool { return g.pane != nil && pid == g.pane.PID })
	}
	pick, owner := env.taskPicker(ctx, []*gcTarget{g}, protect, false)
	targets, err := env.endAndClose(ctx, []*gcTarget{g}, pick, owner, 0)
	if err != nil {
		return err
	}
	return env.recordReclaimed(ctx, targets, "kill")
}

// AutoGCDue reports whether finished tasks have windows older than
// closeAfter (config close_after; 0 keeps them), so that a command can
// start `runner gc` in the background only when there is work.
func AutoGCDue(st *state.State, closeAfter time.Duration, now time.Time) bool {
	if closeAfter <= 0 {
		return false
	}
	for _, t := range st.Tasks {
		if t.Status.IsTerminal() && t.Reclaimed.IsZero() && t.Tmux.Pane != "" && now.Sub(t.Ended) >= closeAfter {
			return true
		}
	}
	return false
}

// StartAutoGC starts `runner gc --auto` in the background (detached, its
// output appended to gc.log in the state directory) when AutoGCDue says
// finished tasks are older than closeAfter; st is a state the caller read.
// It returns the gc's pid, 0 when nothing is due.
func StartAutoGC(env *Env, st *state.State, closeAfter time.Duration) (int, error) {
	if env.Exe == "" || st == nil || !AutoGCDue(st, closeAfter, env.now()) {
		return 0, nil
	}
	logf, err := os.OpenFile(filepath.Join(env.Store.Dir(), "gc.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("open the gc log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(env.Exe, "--socket", env.TC.Socket(), "gc", "--auto", "--older-than", closeAfter.String())
	// Not a process of the task whose pane may have started this one.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return isTaskIdentityVar(k)
	})
	cmd.Env = append(cmd.Env, "RUNNER_STATE_DIR="+env.Store.Dir())
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start the background gc: %w", err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	return pid, nil
}
