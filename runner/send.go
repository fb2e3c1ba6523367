// Follow-up turns: send a prompt to a task between turns, relaunch an
// agent whose window was closed, resume an orphaned task.

package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/budget"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/ports"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/runner/taskbook"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// SendRequest is one `runner send`.
type SendRequest struct {
	Ref      string
	Text     string
	Detach   bool
	Settings *settings.Run // overrides for this turn (nil: the task's own)
}

// Send delivers a follow-up prompt to a task whose agent is ready (its last
// turn ended) and supervises that turn like dispatch.
func Send(ctx context.Context, env *Env, req SendRequest) (*state.Task, error) {
	if strings.TrimSpace(req.Text) == "" {
		return nil, fault.Usagef("the text is empty")
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
	if err := prof.CheckTaskSize(req.Text); err != nil {
		return t, err
	}
	set, err := settings.Of(t)
	if err != nil {
		return t, err
	}
	if req.Settings != nil {
		set = *req.Settings
	}
	tc, err := env.PaneClient(ctx, t)
	if err != nil {
		return t, err
	}
	if info, err := tc.Pane(ctx, t.Tmux.Pane); t.Tmux.Pane == "" || err != nil || info.Dead || !t.Reclaimed.IsZero() || info.WindowName != t.ID {
		// The window was closed (gc, cancel --kill) or the agent quit:
		// start it again on its conversation. (A pane of another name
		// is not the task's: pane ids start again with a new server.)
		var own *tmuxctl.PaneInfo
		if t.Tmux.Pane != "" && err == nil && info.WindowName == t.ID {
			own = &info
		}
		if t, err = relaunch(ctx, env, t, prof, set, own); err != nil {
			return t, err
		}
	}
	if err := atPrompt(ctx, env, t, prof); err != nil {
		return t, err
	}
	set.Detached = req.Detach
	taskbook.SettleNotices(ctx, env.Record(), t.ID)
	notices, err := reopen(ctx, env, t, set, req.Text)
	if err != nil {
		return t, err
	}
	sup, stop, err := newSupervisor(ctx, env, t, prof, set, nil)
	if err != nil {
		requeueNotices(ctx, env, notices)
		return t, err
	}
	defer stop()
	if err := sup.Deliver(ctx, withNotices(req.Text, notices), false); err != nil {
		sup.settleNotices(ctx, notices, state.MessageFailed, "the prompt was not confirmed: "+err.Error())
		return t, err
	}
	sup.settleNotices(ctx, notices, state.MessageDelivered, "")
	if req.Detach {
		if _, err := env.StartSupervisor(t.ID, nil); err != nil {
			return t, err
		}
		return env.Record().Task(ctx, t.ID)
	}
	tctx, cancel := sup.StartClock(sup.runCtx, set.TaskTimeout())
	defer cancel()
	err = sup.concludeAll(ctx, sup.hostLost(sup.MonitorTurn(tctx, time.Time{})))
	nt, _ := env.Record().Task(context.WithoutCancel(ctx), t.ID)
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
		if caller := CallerTask(ctx, env, st, nil); caller != "" {
			return fault.Usagef("runner send is for the user; from inside task %s use 'runner msg %s TEXT' (delivered when %s is ready, with loop protection)", caller, t.ID, t.ID)
		}
	}
	switch t.Status {
	case state.StatusReady:
		if t.SupervisorPID != os.Getpid() && reconcile.SupervisorAlive(t) {
			return fault.Usagef("task %s is taking its messages (supervisor %d): wait for its turn to end ('runner wait %s') before sending", t.ID, t.SupervisorPID, t.ID)
		}
	case state.StatusDone, state.StatusFailed, state.StatusTimeout, state.StatusCancelled:
	case state.StatusRunning, state.StatusStarting, state.StatusQueued:
		return fault.Usagef("task %s is %s: wait for its turn to end ('runner wait %s') before sending", t.ID, t.Status, t.ID)
	default:
		return fault.Usagef("task %s is %s: it cannot take a prompt (see 'runner status %s')", t.ID, t.Status, t.ID)
	}
	return nil
}

// atPrompt checks that the task's agent shows its prompt. A turn the
// agent's hook ended may still be drawing its prompt back (a busy or an
// undecided screen): that is waited for (briefly) rather than refused. A view hiding the prompt (the
// profile's leave rules: Codex's transcript browsing, where a user who
// attached left it) is left with its keys, as a wait leaves it.
func atPrompt(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile) error {
	tc, err := env.PaneClient(ctx, t)
	if err != nil {
		return err
	}
	screen, err := tc.CaptureScreen(ctx, t.Tmux.Pane)
	if err != nil {
		return err
	}
	d := profile.Detect(prof, screen)
	if len(d.LeaveKeys) > 0 {
		if screen, err = monitor.LeaveView(ctx, tc, t.Tmux.Pane, prof, d); err != nil {
			return err
		}
		d = profile.Detect(prof, screen)
	}
	// Busy, or mid-redraw (unknown: pi redraws its editor after a turn),
	// right after a turn ended: waited for briefly, not refused.
	if (d.State == profile.StateBusy || d.State == profile.StateUnknown) && t.Status == state.StatusDone && t.Tmux.Host == "" {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		mon := &monitor.Monitor{TC: env.TC, Pane: t.Tmux.Pane, Profile: prof, Transcript: t.Transcript,
			Died: env.Store.PaneDiedFile(), Settle: prof.Settle.Duration, PollFirst: monitor.ForegroundPoll}
		obs, werr := mon.Wait(wctx, monitor.GoalReady, clock.Now())
		cancel()
		if werr == nil && !obs.Dead {
			screen = obs.Screen
		}
	}
	if d := profile.Detect(prof, screen); !d.State.Idle() {
		return fault.Usagef("task %s: its agent is not at its prompt (it looks %s); attach with 'runner attach %s'", t.ID, d.State, t.ID)
	}
	return nil
}

// withNotices is the user's text with runner's notices that waited for
// this turn after it (messaging.ClaimNotices).
func withNotices(text string, notices []*state.Message) string {
	if len(notices) == 0 {
		return text
	}
	return text + "\n\n" + messaging.Prompt(notices)
}

// settleNotices records how the notices that went with a sent prompt
// fared.
func (s *supervision) settleNotices(ctx context.Context, notices []*state.Message, to state.MessageStatus, reason string) {
	if len(notices) > 0 {
		s.settleMessages(ctx, notices, to, reason)
	}
}

// requeueNotices puts notices claimed for a prompt that was never typed
// back in the queue.
func requeueNotices(ctx context.Context, env *Env, notices []*state.Message) {
	if len(notices) == 0 {
		return
	}
	_ = env.Store.Update(context.WithoutCancel(ctx), func(st *state.State) error {
		for _, b := range notices {
			if m := st.Messages[b.ID]; m != nil && m.Status == state.MessageDelivering {
				m.Status, m.ClaimedBy = state.MessagePending, 0
			}
		}
		return nil
	})
}

// reopen opens the task for a new turn from the user, owned by this
// process, unless something (a message delivery) took the agent since t
// was read. runner's notices that waited for a turn someone starts are
// claimed to go with this one (returned).
func reopen(ctx context.Context, env *Env, t *state.Task, set settings.Run, text string) (notices []*state.Message, err error) {
	raw, _ := json.Marshal(set)
	over := ""
	err = env.Store.Update(ctx, func(s *state.State) error {
		notices = nil
		x := s.Task(t.ID)
		if x == nil {
			return fault.Usagef("task %s was pruned", t.ID)
		}
		if x.Status != t.Status && x.Status != state.StatusDone {
			return fault.Usagef("task %s is %s now: wait for its turn to end ('runner wait %s') before sending", t.ID, x.Status, t.ID)
		}
		// Past its budget: no further turn; the task ends so.
		over, _ = budget.Over(s, t.ID, func(y *state.Task) settings.Budget {
			if y.ID == t.ID {
				return set.Budget()
			}
			return settings.BudgetOf(y)
		}, false)
		if over != "" {
			x.SupervisorPID, x.SupervisorStart = 0, ""
			return x.SetStatus(state.StatusFailed, env.Time(), over)
		}
		// A prompt from the user: what the agent sends now is not a reply
		// to a message.
		x.Handling, x.HandlingHops = nil, 0
		x.Settings = raw
		x.Ended = time.Time{}
		x.ExitCode = nil
		x.Answer = "" // the answer is the new turn's, once it ends
		x.SupervisorPID, x.SupervisorStart = os.Getpid(), reconcile.SelfIdentity()
		_ = x.SetStatus(state.StatusReady, env.Time(), "follow-up prompt: "+TaskTitle(text))
		notices = messaging.ClaimNotices(s, t.ID, reconcile.LiveProcs{})
		return nil
	})
	if err == nil && over != "" {
		err = fmt.Errorf("task %s: %s (raise it: runner send %s --max-turns N, --budget-tokens N or --budget-usd X): %w", t.ID, over, t.ID, fault.ErrBudget)
	}
	return notices, err
}

// relaunch starts a task's agent again, in a new window, on the
// conversation it had (its profile's resume arguments and the task's
// AgentSession), and waits until it is ready. pane is the task's old
// window when it is still there (its agent quit: its exit status is
// recorded with the restart); it is closed first.
func relaunch(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile, set settings.Run, pane *tmuxctl.PaneInfo) (*state.Task, error) {
	why := fmt.Sprintf("its agent's pane %s is gone", t.Tmux.Pane)
	switch {
	case !t.Reclaimed.IsZero():
		why = fmt.Sprintf("its agent's window was closed by gc or cancel --kill at %s", t.Reclaimed.Local().Format(time.DateTime))
	case pane != nil && pane.Dead:
		why = fmt.Sprintf("its agent quit after its last turn (exit status %d; its pane %s is dead)", pane.DeadStatus, t.Tmux.Pane)
	}
	switch {
	case len(prof.Resume) == 0:
		return t, fault.Usagef("task %s: %s, and agent %s cannot resume a conversation (its profile has no \"resume\" arguments); dispatch a new task", t.ID, why, prof.Name)
	case t.AgentSession == "":
		return t, fault.Usagef("task %s: %s, and the agent's session id was never seen, so its conversation cannot be resumed; dispatch a new task", t.ID, why)
	case set.Start == nil || len(set.Start.Argv) == 0:
		return t, fault.Usagef("task %s: %s, and its record has no launch command (dispatched by an older runner); dispatch a new task", t.ID, why)
	}
	if fi, err := os.Stat(t.Dir); t.Tmux.Host == "" && (err != nil || !fi.IsDir()) {
		// tmux would start the agent in another directory.
		where := "its directory " + t.Dir + " is gone"
		if t.Branch != "" {
			where = "its worktree " + t.Dir + " was removed (runner gc removes merged ones; its branch " + t.Branch + " may still exist)"
		}
		return t, fault.Usagef("task %s: %s, and %s; dispatch a new task", t.ID, why, where)
	}
	if pane != nil {
		tc, err := env.PaneClient(ctx, t)
		if err != nil {
			return t, err
		}
		if err := tc.KillWindow(ctx, t.Tmux.Pane); err != nil && !errors.Is(err, tmuxctl.ErrNotFound) {
			return t, err
		}
	}
	spec := *set.Start
	spec.Argv = prof.ResumeArgv(set.Start.Argv, t.AgentSession)
	if err := env.Store.Update(ctx, func(s *state.State) error {
		x := s.Task(t.ID)
		if x == nil {
			return fault.Usagef("task %s was pruned", t.ID)
		}
		if x.Status != t.Status {
			return fault.Usagef("task %s is %s now: wait for its turn to end ('runner wait %s') before sending", t.ID, x.Status, t.ID)
		}
		x.Reclaimed, x.Ended, x.ExitCode = time.Time{}, time.Time{}, nil
		x.SupervisorPID, x.SupervisorStart = os.Getpid(), reconcile.SelfIdentity()
		if err := ports.Keep(s, x); err != nil {
			return err
		}
		t.Ports = x.Ports
		return x.SetStatus(state.StatusStarting, env.Time(), "follow-up prompt: resuming agent session "+t.AgentSession+" ("+why+")")
	}); err != nil {
		return t, err
	}
	env.Say("task %s: %s; starting %s again on session %s", t.ID, why, prof.Name, t.AgentSession)
	if err := launch(ctx, env, t, prof, &spec); err != nil {
		_ = env.Record().Finish(context.WithoutCancel(ctx), t.ID, state.StatusFailed, "resume failed: "+err.Error(), nil)
		return t, err
	}
	nt, err := env.Record().Task(ctx, t.ID)
	if err != nil {
		return t, err
	}
	sup, stop, err := newSupervisor(ctx, env, nt, prof, set, nil)
	if err != nil {
		return nt, err
	}
	defer stop()
	if err := sup.waitReady(sup.runCtx); err != nil {
		err = sup.concludeAll(ctx, sup.hostLost(err))
		if x, _ := env.Record().Task(context.WithoutCancel(ctx), t.ID); x != nil {
			nt = x
		}
		return nt, err
	}
	return env.Record().Task(ctx, t.ID)
}

// orphanedExitWait bounds how long Resume waits for the supervisor that
// recorded a task orphaned to exit.
const orphanedExitWait = 10 * time.Second

// waitSupervisorGone waits, at most d (or until ctx ends), until t's
// supervisor process has exited, and reports whether it has.
func waitSupervisorGone(ctx context.Context, t *state.Task, d time.Duration) bool {
	deadline := clock.Now().Add(d)
	for reconcile.SupervisorAlive(t) {
		if !clock.Now().Before(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
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
		if reconcile.SupervisorAlive(t) {
			return t, 0, fault.Usagef("task %s is %s and supervised by process %d; nothing to resume", t.ID, t.Status, t.SupervisorPID)
		}
		return t, 0, fault.Usagef("task %s is %s; only orphaned tasks and tasks waiting for input can be resumed", t.ID, t.Status)
	}
	if t.Status == state.StatusOrphaned && t.SupervisorPID != os.Getpid() {
		// The supervisor that recorded it orphaned is on its way out (its
		// sessions closing): a resume right after the orphaning waits for
		// it rather than being refused.
		waitSupervisorGone(ctx, t, orphanedExitWait)
	}
	if reconcile.SupervisorAlive(t) && t.SupervisorPID != os.Getpid() {
		return t, 0, fault.Usagef("task %s is supervised by process %d already", t.ID, t.SupervisorPID)
	}
	if t.Tmux.Pane == "" && t.Status == state.StatusOrphaned && len(t.After) > 0 {
		return resumeQueued(ctx, env, t)
	}
	tc, err := env.PaneClient(ctx, t)
	if err != nil {
		return t, 0, err
	}
	info, err := tc.Pane(ctx, t.Tmux.Pane)
	if errors.Is(err, hosts.ErrUnreachable) || (t.Tmux.Host != "" && err != nil && !errors.Is(err, tmuxctl.ErrNotFound)) {
		return t, 0, fmt.Errorf("task %s: its pane is on host %s: %w", t.ID, t.Tmux.Host, err)
	}
	if err != nil || info.Dead {
		return t, 0, fault.Usagef("task %s: its pane %s is gone or dead; it cannot be resumed", t.ID, t.Tmux.Pane)
	}
	set, err := settings.Of(t)
	if err != nil {
		return t, 0, err
	}
	set.Detached = true
	raw, _ := json.Marshal(set)
	wasOrphaned := t.Status == state.StatusOrphaned
	if err := env.Record().Update(ctx, t.ID, func(x *state.Task) {
		x.Settings = raw
		// An orphaned task is supervised again from now on: a `wait`
		// right after resume must not see the old orphaned status and end.
		if wasOrphaned && x.Status == state.StatusOrphaned {
			next := state.StatusRunning
			if x.Delivery == "" {
				next = state.StatusStarting
			}
			_ = x.SetStatus(next, env.Time(), resumeReason)
		}
	}); err != nil {
		return t, 0, err
	}
	pid, err := env.StartSupervisor(t.ID, nil)
	if err != nil {
		if wasOrphaned {
			_ = env.Record().SetStatus(context.WithoutCancel(ctx), t.ID, state.StatusOrphaned, "resume failed: "+err.Error(), nil)
		}
		return t, 0, err
	}
	t, err = env.Record().Task(ctx, t.ID)
	return t, pid, err
}

// resumeQueued puts a task orphaned while waiting for its dependencies back
// in the queue and starts a detached supervisor that waits on.
func resumeQueued(ctx context.Context, env *Env, t *state.Task) (*state.Task, int, error) {
	set, err := settings.Of(t)
	if err != nil {
		return t, 0, err
	}
	set.Detached = true
	raw, _ := json.Marshal(set)
	if err := env.Record().Update(ctx, t.ID, func(x *state.Task) {
		x.Settings = raw
		if x.Status == state.StatusOrphaned {
			_ = x.SetStatus(state.StatusQueued, env.Time(), "resumed: "+reconcile.WaitingReason(x.After))
		}
	}); err != nil {
		return t, 0, err
	}
	pid, err := env.StartSupervisor(t.ID, nil)
	if err != nil {
		_ = env.Record().SetStatus(context.WithoutCancel(ctx), t.ID, state.StatusOrphaned, "resume failed: "+err.Error(), nil)
		return t, 0, err
	}
	t, err = env.Record().Task(ctx, t.ID)
	return t, pid, err
}
