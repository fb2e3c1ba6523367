package gc

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/worktree"

	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Options controls GC.
type Options struct {
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
	// NoWait: when another gc runs, return ErrBusy instead of waiting
	// for it (the background gc of close_after).
	NoWait bool
	// ForceWorktrees removes the worktrees (and branches) of finished
	// tasks even when their branch is not merged.
	ForceWorktrees bool
}

// ErrBusy is returned with Options.NoWait when another gc runs (exit 5).
var ErrBusy error = busyError{}

// busyError is ErrBusy: made without fmt, which no package runs at init
// (every runner process would pay for it, issue 51).
type busyError struct{}

func (busyError) Error() string { return "another runner gc is running: " + state.ErrBusy.Error() }
func (busyError) Unwrap() error { return state.ErrBusy }

// Defaults of Options.
const (
	DefaultQuitWait = 5 * time.Second
	// DefaultKillGrace is subproc.Grace: a task's processes get the
	// same time between SIGTERM and SIGKILL as runner's own children.
	DefaultKillGrace = subproc.Grace
)

// Task is one task whose window gc closed and whose processes it ended
// (with DryRun: would).
type Task struct {
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
	// Host is the host the task's window was on ("" for this machine).
	Host string `json:"host,omitempty"`
}

// Skip is a finished task gc left alone, and why.
type Skip struct {
	ID     string `json:"id"`
	Pane   string `json:"pane,omitempty"`
	Reason string `json:"reason"`
}

// Result is what GC did.
type Result struct {
	DryRun         bool     `json:"dry_run"`
	Tasks          []Task   `json:"tasks"`
	Skipped        []Skip   `json:"skipped"`
	SessionsClosed []string `json:"sessions_closed"`
	// Worktrees lists the task worktrees: removed (merged, or forced) or
	// kept, with why.
	Worktrees []worktree.Info `json:"worktrees"`
	// Refs lists the refs removed that groups across hosts left once they
	// had gone (their snapshot on each host, a pick's tip here).
	Refs []GroupRef `json:"refs"`
}

// Processes counts the processes in r.
func (r *Result) Processes() int {
	n := 0
	for _, t := range r.Tasks {
		n += len(t.Processes)
	}
	return n
}

// stateDirOption is the pane option naming the state directory of the
// task that runs in the pane, which package runner sets at launch (its
// StateDirOption, held equal by TestStateDirOptionIsRunners): gc closes
// only its own windows.
const stateDirOption = "@runner_state"

// gcLockKey names gc's lock among the project locks (a project name cannot
// start with '_').
const gcLockKey = "_gc"

// Run closes the windows of finished tasks that ended at least
// opts.OlderThan ago (and the windows left by tasks whose records were
// pruned) and ends every process those tasks started. A window that a
// tmux client is showing is never closed; that task is skipped. Before a
// window closes, the agent is asked to quit (its profile's quit keys) so
// that it prints its session id, which is recorded for `runner send` to
// resume the conversation.
func Run(ctx context.Context, d Deps, opts Options) (*Result, error) {
	if opts.OlderThan < 0 {
		return nil, fault.Usagef("--older-than must not be negative (got %v)", opts.OlderThan)
	}
	if !opts.DryRun {
		lock, err := d.Store.LockProject(ctx, gcLockKey, !opts.NoWait)
		if errors.Is(err, state.ErrBusy) {
			return nil, ErrBusy
		}
		if err != nil {
			return nil, fmt.Errorf("gc: wait for another gc to finish: %w", err)
		}
		defer lock.Unlock()
	}
	st, panes, err := d.ReconcilePanes(ctx)
	if err != nil {
		return nil, err
	}
	clients, err := d.TC.Clients(ctx)
	if err != nil {
		return nil, err
	}
	byPane := map[string]tmuxctl.PaneInfo{}
	for _, p := range panes {
		byPane[p.ID] = p
	}
	res := &Result{DryRun: opts.DryRun, Tasks: []Task{}, Skipped: []Skip{}, SessionsClosed: []string{}, Refs: []GroupRef{}}
	targets := gcTargets(ctx, d, st, panes, clients, opts.OlderThan, res)
	protect := protectedPIDs(st, byPane)
	if !opts.DryRun {
		if targets, err = claimTargets(ctx, d, targets); err != nil {
			return nil, err
		}
		quitAgents(ctx, d, targets, opts.QuitWait)
	}
	pick, owner := taskPicker(ctx, d, targets, protect, true)
	if opts.DryRun {
		targets, err = wouldEnd(d, targets, pick, owner)
	} else {
		targets, err = endAndClose(ctx, d, targets, pick, owner, opts.Grace)
	}
	if err != nil {
		return nil, err
	}
	sessions := map[string]bool{}
	for _, g := range targets {
		prof, _ := profile.FindProfile(d.Profiles, agentOf(g.task))
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
	if err := gcRemote(ctx, d, st, opts, res); err != nil {
		return res, err
	}
	if res.Worktrees, err = gcWorktrees(ctx, d, opts); err != nil {
		return res, err
	}
	if res.Worktrees == nil {
		res.Worktrees = []worktree.Info{}
	}
	if err := gcGroups(ctx, d, st, opts, res); err != nil {
		return res, err
	}
	if opts.DryRun {
		return res, nil
	}
	if err := recordReclaimed(ctx, d, targets, "gc"); err != nil {
		return res, err
	}
	res.SessionsClosed = emptiedSessions(ctx, d, sessions)
	return res, nil
}

// emptiedSessions are those of sessions that have no pane left: tmux
// closes a session with its last window.
func emptiedSessions(ctx context.Context, d Deps, sessions map[string]bool) []string {
	closed := []string{}
	left, err := d.TC.ListPanes(ctx)
	if err != nil {
		return closed
	}
	for _, p := range left {
		delete(sessions, p.Session)
	}
	for s := range sessions {
		closed = append(closed, s)
	}
	slices.Sort(closed)
	return closed
}

// wouldEnd attributes to the targets the processes a gc would end (dry
// run: nothing is signalled), chosen by the rule the real run's
// proctree.End applies (Procs.Endable): what a gc spares (another user's
// process, a tmux server) a dry run does not list.
func wouldEnd(d Deps, targets []*target, pick Picker, owner map[int]string) ([]*target, error) {
	found, err := d.procs().Endable(pick)
	if err != nil && !errors.Is(err, proctree.ErrUnsupported) {
		return nil, err
	}
	return attribute(targets, found, owner), nil
}

// gcTargets lists what gc reclaims: the finished tasks that ended at least
// olderThan ago, and the windows left by tasks whose records were pruned
// (named after a task id, marked with this state directory). A window a
// tmux client shows is skipped (in res.Skipped).
func gcTargets(ctx context.Context, d Deps, st *state.State, panes []tmuxctl.PaneInfo, clients []tmuxctl.ClientInfo, olderThan time.Duration, res *Result) []*target {
	shown := map[string]string{} // window id → client tty
	for _, c := range clients {
		shown[c.WindowID] = c.TTY
	}
	byPane := map[string]tmuxctl.PaneInfo{}
	for _, p := range panes {
		byPane[p.ID] = p
	}
	now := d.Now()
	var targets []*target
	claimed := map[string]bool{} // panes that belong to a task in the state
	for _, t := range st.TaskList() {
		if t.Tmux.Host != "" {
			continue // gcRemote
		}
		if p, ok := byPane[t.Tmux.Pane]; ok && ownPane(t, p) {
			claimed[t.Tmux.Pane] = true
		}
		if !t.Status.IsTerminal() || now.Sub(t.Ended) < olderThan {
			continue
		}
		g := &target{task: t, item: Task{ID: t.ID, Status: t.Status, Ended: t.Ended, Session: t.Tmux.Session, AgentSession: t.AgentSession}}
		if p, ok := byPane[t.Tmux.Pane]; ok && ownPane(t, p) {
			if tty, ok := shown[p.WindowID]; ok {
				res.Skipped = append(res.Skipped, Skip{ID: t.ID, Pane: p.ID, Reason: "a tmux client (" + tty + ") is showing its window"})
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
		if v, err := d.TC.ShowOption(ctx, p.ID, stateDirOption); err != nil || v != d.Store.Dir() {
			continue
		}
		if tty, ok := shown[p.WindowID]; ok {
			res.Skipped = append(res.Skipped, Skip{ID: p.WindowName, Pane: p.ID, Reason: "a tmux client (" + tty + ") is showing its window"})
			continue
		}
		p := p
		targets = append(targets, &target{pane: &p, item: Task{ID: p.WindowName, Session: p.Session, Pane: p.ID, Pruned: true}})
	}
	return targets
}

// claimTargets marks the targets' tasks reclaimed in one state update
// before anything is ended, and drops those that started again since they
// were read (a send, a message): a task being reclaimed is not restarted
// behind gc's back, and a restarted one is not reclaimed.
func claimTargets(ctx context.Context, d Deps, targets []*target) ([]*target, error) {
	now := d.Now()
	var keep []*target
	err := d.Store.Update(ctx, func(s *state.State) error {
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

// target is a task (or a pruned task's window) being reclaimed.
type target struct {
	task *state.Task       // nil for a pruned task
	pane *tmuxctl.PaneInfo // its live window, if any
	item Task
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

// AutoStart is a command's start of the background gc of close_after
// (closeAfter; 0: none): StartAuto over the state as stored now, unless
// the command runs in an agent's task (inTask), which leaves the
// machine's upkeep to the user's commands. A state that cannot be read
// starts nothing; the error is the start's.
func AutoStart(ctx context.Context, d Deps, closeAfter time.Duration, inTask bool) error {
	if closeAfter <= 0 || inTask {
		return nil
	}
	// What AutoGCDue looks at is in the index: no task's record is read
	// (a dispatch pays this before its task is recorded).
	st, err := d.Store.ReadIndex(ctx)
	if err != nil {
		return nil
	}
	_, err = StartAuto(d, st, closeAfter)
	return err
}

// StartAuto starts `runner gc --auto` in the background (detached, its
// output appended to gc.log in the state directory) when AutoGCDue says
// finished tasks are older than closeAfter; st is a state the caller read.
// It returns the gc's pid, 0 when nothing is due.
func StartAuto(d Deps, st *state.State, closeAfter time.Duration) (int, error) {
	if d.Exe == "" || st == nil || !AutoGCDue(st, closeAfter, d.Now()) {
		return 0, nil
	}
	pid, err := d.SpawnRunner(filepath.Join(d.Store.Dir(), "gc.log"), nil, "gc", "--auto", "--older-than", closeAfter.String())
	if err != nil {
		return 0, fmt.Errorf("start the background gc: %w", err)
	}
	return pid, nil
}
