package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Supervise drives a task from wherever it is: waits for the agent to be
// ready (accepting a trust dialog on --yes-trust), delivers the awareness
// block and the task, monitors the turn until done, needs_input, exit,
// timeout or cancellation, and records the outcome, the commit and the
// notification. It is what a foreground dispatch runs in-process and what
// `runner supervise` (detached, or after `runner resume`) runs.
//
// The returned error maps to the exit code: nil for done, ErrNeedsInput,
// ErrTaskTimeout, ErrTaskFailed, ErrCancelled or the context's error.
func Supervise(ctx context.Context, env *Env, id string) error {
	t, err := env.task(ctx, id)
	if err != nil {
		return err
	}
	var set RunSettings
	if len(t.Settings) > 0 {
		if err := json.Unmarshal(t.Settings, &set); err != nil {
			return fmt.Errorf("task %s: settings: %w", id, err)
		}
	}
	prof, err := profile.FindProfile(env.Profiles, t.Agent)
	if err != nil {
		return fmt.Errorf("task %s: %w", id, err)
	}
	if t.Status == state.StatusQueued && t.Tmux.Pane == "" {
		// Queued behind other tasks (dispatch --after): wait, then start.
		unlock, err := env.startQueued(ctx, t, set)
		if err != nil {
			return err
		}
		if unlock != nil {
			defer unlock()
		}
		if t, err = env.task(ctx, id); err != nil {
			return err
		}
	}
	if t.Tmux.Pane == "" {
		return fmt.Errorf("task %s has no pane (it never started)", id)
	}
	if t.Status.IsTerminal() {
		// Cancelled between the start of this supervisor and now.
		return fmt.Errorf("task %s already ended (%s): nothing to supervise", id, t.Status)
	}
	timeout := set.Timeout
	if timeout <= 0 {
		timeout = DefaultTaskTimeout
	}
	// Take the task over, unless another live supervisor has it (the
	// process that started this one, a runner msg or send, is expected).
	owner := 0
	if err := env.updateTaskDurably(ctx, "task "+id+": take over", id, func(x *state.Task) error {
		owner = 0
		if p := x.SupervisorPID; p != 0 && p != os.Getpid() && p != os.Getppid() && processAlive(p) {
			owner = p
			return nil
		}
		x.SupervisorPID = os.Getpid()
		return nil
	}); err != nil {
		return err
	}
	if owner != 0 {
		return fmt.Errorf("task %s is supervised by process %d already", id, owner)
	}
	s, stop, err := env.newSupervisor(ctx, t, prof, set)
	if err != nil {
		return err
	}
	defer stop()
	s.timeout = timeout
	// The task's time (--timeout) counts from the delivery of its text
	// (run starts the clock); the start-up has --ready-timeout. A task
	// delivered already (a follow-up or message turn, a resume) gets its
	// time from now.
	tctx, cancel := context.WithCancel(s.runCtx)
	if t.Delivery != "" {
		cancel()
		tctx, cancel = s.startClock(s.runCtx, timeout)
	}
	defer cancel()
	err = s.hostLost(s.run(tctx, t))
	return s.concludeAll(ctx, tctx, err)
}

// newSupervisor makes the supervisor of t's pane as it is now. For a task
// on a host it starts streaming the host's files into their local copies,
// which its monitor watches as a local task's; stop ends that.
func (env *Env) newSupervisor(ctx context.Context, t *state.Task, prof *profile.Profile, set RunSettings) (s *supervisor, stop func(), err error) {
	s = &supervisor{env: env, id: t.ID, prof: prof, set: set, pane: t.Tmux.Pane, runCtx: ctx,
		mon: &monitor.Monitor{TC: env.TC, Pane: t.Tmux.Pane, Profile: prof, Transcript: t.Transcript,
			Events: env.Store.TaskFile("events", t.ID), Died: env.Store.PaneDiedFile(), Settle: set.settleFor(prof), Idle: set.Idle}}
	if s.tc, err = env.PaneClient(ctx, t); err != nil {
		return nil, nil, err
	}
	if t.Tmux.Host == "" {
		return s, func() {}, nil
	}
	if s.host, err = env.hostConn(ctx, t.Tmux.Host); err != nil {
		return nil, nil, err
	}
	runCtx, stop, ok := env.takeEarlyMirror(t.ID)
	if !ok {
		if runCtx, stop, err = env.startMirror(ctx, t); err != nil {
			return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	s.runCtx = runCtx
	// The hook's events (from the host's runner binary) stream into the
	// task's usual events file.
	s.mon.TC, s.mon.Remote, s.mon.Died = s.tc, true, env.remoteDiedFile(t.ID)
	return s, stop, nil
}

// hostLost is the error a supervision ends with: ErrHostLost's when the
// connection to its host was lost meanwhile (the stream stayed down, or a
// tmux call failed and the host does not answer now), else err.
func (s *supervisor) hostLost(err error) error {
	if cause := context.Cause(s.runCtx); errors.Is(cause, ErrHostLost) {
		return cause
	}
	var eo *errOutcome
	if s.host == nil || err == nil || (errors.As(err, &eo) && eo.o.status != state.StatusFailed) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.runCtx), 15*time.Second)
	defer cancel()
	if _, perr := s.host.run(ctx, "true"); errors.Is(perr, ErrHostUnreachable) {
		return fmt.Errorf("%w: %v (while: %v)", ErrHostLost, perr, err)
	}
	return err
}

// concludeAll concludes a turn and, while messages are waiting for the
// task when a turn ends done, delivers them as the next turn (each with the
// task's timeout) and concludes that one.
func (s *supervisor) concludeAll(ctx, tctx context.Context, err error) error {
	cancel := func() {}
	defer func() { cancel() }()
	for {
		err = s.conclude(ctx, tctx, err)
		cancel()
		if !errors.Is(err, errMoreMessages) {
			return err
		}
		timeout := s.set.Timeout
		if timeout <= 0 {
			timeout = DefaultTaskTimeout
		}
		tctx, cancel = s.startClock(s.runCtx, timeout)
		err = s.hostLost(s.messageTurn(tctx))
	}
}

type supervisor struct {
	// deadline is when the task's time runs out (startClock).
	deadline time.Time
	env      *Env
	id       string
	prof     *profile.Profile
	set      RunSettings
	pane     string
	tc       *tmuxctl.Client // the pane's server: here, or the task's host's
	mon      *monitor.Monitor
	// runCtx is the supervision's context: for a task on a host, it ends
	// (cause ErrHostLost) when the connection stays lost.
	runCtx context.Context
	host   *hostConn // the task's host; nil for this machine
	// timeout is the task's --timeout, counted from the delivery.
	timeout time.Duration

	// The prompt of the turn being monitored, as deliver left it.
	payload string    // what was pasted
	sig     string    // deliverySignature(payload)
	sent    time.Time // when it was delivered
	// graceFrom is when the wait for a sign of the turn began: the
	// delivery, or the answer to a trust dialog that came after it.
	graceFrom time.Time
	// unstarted: the prompt was delivered but no sign that it began a
	// turn has been seen yet (a busy screen, the prompt in the transcript,
	// an approval dialog, a hook event). Such a turn never ends done.
	// False when monitoring a turn this supervisor did not deliver (a
	// resumed task).
	unstarted bool
	enters    int  // Enter presses after delivery, for a prompt left in the composer
	retyped   bool // the prompt was typed a second time, after it was lost
	echoWait  bool // an echo was seen and a busy screen awaited (Profile.EchoBeforeTurn)
	// echoBase is how many echoes of the prompt a screen showed after a
	// trust dialog that came after the delivery: a copy left on screen
	// from before the dialog (Gemini drops the prompt and redraws it) is
	// no sign; only a new echo is.
	echoBase int
}

// Bounds on getting a delivered prompt to start a turn.
const (
	// startGrace is how long a ready screen with an empty composer and no
	// sign of a turn may last before the prompt counts as lost: an agent
	// that queued it while starting (Codex, Qwen) takes it up within
	// seconds of the end of its start-up.
	startGrace = 20 * time.Second
	// composerEnters is how many more Enters a prompt still sitting in the
	// composer after start-up gets.
	composerEnters = 2
	// echoWait is how long a profile with EchoBeforeTurn waits for a busy
	// screen after the echo before the echo alone counts (a turn quicker
	// than the captures).
	echoWait = 5 * time.Second
)

// outcome is how a supervision phase ended.
type outcome struct {
	status state.Status
	reason string
	obs    monitor.Observation
	code   *int
	// keepQueue ends the supervision without delivering the queue (the
	// agent was not at its prompt for a message turn).
	keepQueue bool
}

// errOutcome carries a final status out of run.
type errOutcome struct{ o outcome }

func (e *errOutcome) Error() string { return string(e.o.status) + ": " + e.o.reason }

func (s *supervisor) run(ctx context.Context, t *state.Task) error {
	env := s.env
	switch t.Status {
	case state.StatusQueued, state.StatusStarting:
		if err := s.waitReady(ctx); err != nil {
			return err
		}
		t, _ = env.task(ctx, s.id)
		fallthrough
	case state.StatusReady:
		if t.Delivery != "" {
			// Not the first turn: `runner msg` woke an idle agent.
			return s.messageTurn(ctx)
		}
		text, err := env.Store.TaskText(t)
		if err != nil {
			return err
		}
		if err := s.deliver(ctx, text, true); err != nil {
			return err
		}
		// The task's time counts from here.
		var cancel context.CancelFunc
		ctx, cancel = s.startClock(ctx, s.timeout)
		defer cancel()
	case state.StatusOrphaned:
		if t.Delivery == "" {
			return s.run(ctx, withStatus(t, state.StatusStarting))
		}
		_ = env.setStatus(ctx, s.id, state.StatusRunning, "resumed by supervisor "+strconv.Itoa(os.Getpid()), nil)
	}
	return s.monitorTurn(ctx, time.Time{})
}

func withStatus(t *state.Task, st state.Status) *state.Task {
	c := *t
	c.Status = st
	return &c
}

// waitReady waits until the agent shows its prompt.
func (s *supervisor) waitReady(ctx context.Context) error {
	env := s.env
	readyTimeout := s.set.ReadyTimeout
	if readyTimeout <= 0 {
		readyTimeout = 60 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	// Some CLIs draw their prompt before the input takes text: their
	// first ready screen must hold, with no output at all, for the
	// profile's ready_hold (it is the settle time of this wait).
	readyMon := *s.mon
	if h := s.prof.ReadyHold.Duration; h > readyMon.Settle {
		readyMon.Settle = h
	}
	for {
		obs, err := readyMon.Wait(rctx, monitor.GoalReady, time.Now())
		if err != nil {
			// The ready time's own deadline, not a tmux call's.
			if errors.Is(err, context.DeadlineExceeded) && rctx.Err() != nil && ctx.Err() == nil {
				return &errOutcome{outcome{status: state.StatusTimeout, reason: fmt.Sprintf("the agent was not ready within %s (--ready-timeout)", readyTimeout), obs: obs}}
			}
			return err
		}
		if obs.Dead {
			return &errOutcome{outcome{status: state.StatusExited, reason: fmt.Sprintf("the agent exited with status %d before it was ready", obs.Status), obs: obs, code: &obs.Status}}
		}
		d := obs.Detection
		if d.State == profile.StateNeedsInput {
			if len(d.TrustKeys) > 0 && s.set.YesTrust {
				if err := s.acceptTrust(ctx, rctx, d); err != nil {
					return err
				}
				continue
			}
			if err := s.needsInput(ctx, d, obs); err != nil {
				return err
			}
			continue
		}
		return env.setStatus(ctx, s.id, state.StatusReady, "the agent is ready ("+d.Field+")", nil)
	}
}

// monitorTurn waits for the end of the turn and records it.
func (s *supervisor) monitorTurn(ctx context.Context, since time.Time) error {
	env := s.env
	if since.IsZero() {
		since = time.Now().Add(-time.Second)
	}
	if s.mon.Match.Since.IsZero() {
		// This supervisor did not deliver (send --detach, resume): the
		// turn began before its delivery was recorded.
		s.mon.Match = profile.TurnMatch{Since: since, EventsFrom: -1}
		if t, err := env.task(ctx, s.id); err == nil {
			s.mon.Match.Session = t.AgentSession
			if at := deliveryStart(t); !at.IsZero() {
				s.mon.Match.Since = at
			}
		}
	}
	if s.mon.Skipped == nil {
		s.mon.Skipped = func(ev profile.HookEvent, why string) {
			env.say("task %s: hook event %s not taken: %s", s.id, ev.Name, why)
		}
	}
	// Checked by Dispatch: an error here is a record edited by hand, and
	// approves nothing.
	rules, _ := CompileApproveRules("approve_rules", s.set.ApproveRules)
	for {
		obs, err := s.mon.Wait(ctx, monitor.GoalTurnEnd, since)
		if err != nil {
			return err
		}
		if obs.Dead {
			return &errOutcome{outcome{status: state.StatusExited, reason: fmt.Sprintf("the agent exited with status %d", obs.Status), obs: obs, code: &obs.Status}}
		}
		if obs.SawBusy || obs.Via == "hook" {
			s.unstarted = false
		}
		d := obs.Detection
		switch d.State {
		case profile.StateNeedsInput:
			if err := s.dialog(ctx, d, obs, rules); err != nil {
				return err
			}
			continue
		case profile.StateError:
			return &errOutcome{outcome{status: state.StatusFailed, reason: "the agent reported an error: " + FirstLine(d.Line, 160), obs: obs}}
		default:
			if s.unstarted {
				// Idle, but the prompt has not begun a turn: it waits in
				// the composer, was queued, or was lost.
				if err := s.awaitStart(ctx, obs); err != nil {
					return err
				}
				continue
			}
			if d.ExitStatus != nil && *d.ExitStatus != 0 {
				return &errOutcome{outcome{status: state.StatusFailed, reason: fmt.Sprintf("the command exited with status %d", *d.ExitStatus), obs: obs, code: d.ExitStatus}}
			}
			if h := s.prof.Hook; obs.Via == "screen" && h != nil && h.Grace.Duration > 0 && s.set.Start != nil && s.set.Start.UseHook {
				// The hook of a CLI that fires after its screen settles:
				// its record has the agent's own answer.
				if ev := s.mon.WaitHook(ctx, h.Grace.Duration); ev != nil {
					obs.Via, obs.Hook = "hook", ev
				}
			}
			return &errOutcome{outcome{status: state.StatusDone, reason: "the agent finished its turn (" + obs.Via + ")", obs: obs, code: d.ExitStatus}}
		}
	}
}
