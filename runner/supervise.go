package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/runner/exit"

	"github.com/runner-cli/runner/gitsnap"
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
	// The task's time (--timeout) counts from the delivery of its text
	// (run starts the clock); the start-up has --ready-timeout. A task
	// delivered already (a follow-up or message turn, a resume) gets its
	// time from now.
	tctx, cancel := context.WithCancel(ctx)
	if t.Delivery != "" {
		cancel()
		tctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	s := &supervisor{env: env, id: id, prof: prof, set: set, pane: t.Tmux.Pane, timeout: timeout,
		mon: &Monitor{TC: env.TC, Pane: t.Tmux.Pane, Profile: prof, Transcript: t.Transcript,
			Events: env.Store.TaskFile("events", id), Died: env.Store.PaneDiedFile(), Settle: set.settleFor(prof), Idle: set.Idle}}
	// Take the task over, unless another live supervisor has it (the
	// process that started this one, a runner msg or send, is expected).
	owner := 0
	if err := env.updateDurably(ctx, "task "+id+": take over", func(st *state.State) error {
		owner = 0
		x := st.Task(id)
		if x == nil {
			return fmt.Errorf("task %s: %w", id, state.ErrTaskNotFound)
		}
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
	err = s.run(tctx, t)
	return s.concludeAll(ctx, tctx, err)
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
		tctx, cancel = context.WithTimeout(ctx, timeout)
		err = s.messageTurn(tctx)
	}
}

type supervisor struct {
	env  *Env
	id   string
	prof *profile.Profile
	set  RunSettings
	pane string
	mon  *Monitor
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
	obs    Observation
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
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
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
		obs, err := readyMon.Wait(rctx, GoalReady, time.Now())
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
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

// acceptTrust answers a trust or first-run dialog (--yes-trust) with the
// profile's keys, journals it, and waits (within wctx) until it is gone.
func (s *supervisor) acceptTrust(ctx, wctx context.Context, d profile.Detection) error {
	env := s.env
	t, _ := env.task(ctx, s.id)
	env.journal(ctx, t, "auto-answer", "accepted a trust dialog (--yes-trust): "+d.Question)
	_ = env.update(ctx, s.id, func(t *state.Task) {
		t.AddTurn(env.now(), "auto-accepted (--yes-trust): "+dialogLine(s.prof, d.Question))
	})
	env.say("task %s: accepting the trust dialog (--yes-trust)", s.id)
	if err := env.TC.SendKeys(ctx, s.pane, d.TrustKeys...); err != nil {
		return err
	}
	_, err := s.mon.Wait(wctx, GoalLeaveInput, time.Now())
	return err
}

// needsInput records a question; without --wait-input it ends the
// supervision (exit 4), else it waits until the question is answered.
func (s *supervisor) needsInput(ctx context.Context, d profile.Detection, obs Observation) error {
	env := s.env
	q := d.Question
	if q == "" {
		q = d.Line
	}
	if err := env.setStatus(ctx, s.id, state.StatusNeedsInput, "the agent asks: "+dialogLine(s.prof, q), func(t *state.Task) {
		t.Question = q
		t.ResultTail = tailLines(obs.Screen, 15)
	}); err != nil {
		return err
	}
	t, _ := env.task(ctx, s.id)
	if t != nil {
		env.notify(ctx, t, s.set)
	}
	if !s.set.WaitInput && !s.set.Detached {
		return &errOutcome{outcome{status: state.StatusNeedsInput, reason: q, obs: obs}}
	}
	env.say("task %s needs input: %s (answer with 'runner attach %s')", s.id, dialogLine(s.prof, q), s.id)
	if _, err := s.mon.Wait(ctx, GoalLeaveInput, time.Now()); err != nil {
		return err
	}
	return env.setStatus(ctx, s.id, state.StatusRunning, "the question was answered", func(t *state.Task) { t.Question = "" })
}

// deliver pastes the awareness block (first turn) and the text, confirms
// the submission, and records the outcome.
func (s *supervisor) deliver(ctx context.Context, text string, first bool) error {
	env := s.env
	st, err := env.Store.Read(ctx)
	if err != nil {
		return err
	}
	t := st.Task(s.id)
	payload := text
	if first && s.set.Awareness != AwarenessOff && !s.prof.NoAwareness {
		if block := RenderAwareness(st, t, AwarenessOptions{Mode: s.set.Awareness, MaxChars: s.set.AwarenessMax, Now: env.now()}); block != "" {
			payload = block + "\n" + text
		}
	}
	sig := deliverySignature(payload)
	// The turn this delivery starts: the hook event that ends it comes
	// after this point of the events file, in the agent's session.
	s.mon.Match = profile.TurnMatch{Since: time.Now(), EventsFrom: fileSize(s.mon.Events), Signature: sig}
	if t != nil {
		s.mon.Match.Session = t.AgentSession
	}
	// The screen before the paste: a screen still equal to it after Enter
	// means the text never arrived (the input was not live yet).
	base, err := env.TC.CaptureScreen(ctx, s.pane)
	if err != nil {
		return err
	}
	shown := &transcriptShows{file: t.Transcript, offset: fileSize(t.Transcript), sig: sig}
	waiting := func(screen string) bool { return inComposer(s.prof, screen, sig) }
	// Without markers (or a first line to look for) no sign of a turn
	// can be told from the screen: the turn counts as started.
	hasMarkers := len(s.prof.Ready) > 0 || len(s.prof.Busy) > 0
	s.payload, s.sig, s.unstarted, s.enters, s.echoWait = payload, sig, hasMarkers && sig != "", 0, false
	dc := &deliveryCheck{s: s, base: base, sig: sig, shown: shown}
	res, err := env.TC.Deliver(ctx, s.pane, payload, tmuxctl.DeliverOptions{
		EnterDelay: s.prof.EnterDelay.Duration, Raw: s.prof.PasteRaw, LeaveMode: true, Nudges: 2,
		Accepted: dc.accepted,
		// Enter again only while the text is visibly waiting in the
		// composer: never onto a dialog that appeared meanwhile.
		NudgeIf: waiting,
	})
	if err != nil {
		return err
	}
	s.sent, s.graceFrom = time.Now(), time.Now()
	note := fmt.Sprintf("confirmed after %d Enter in %s", res.Enters, res.Elapsed.Round(time.Millisecond))
	if dc.queued && s.unstarted {
		note = fmt.Sprintf("queued by the starting agent after %d Enter in %s", res.Enters, res.Elapsed.Round(time.Millisecond))
	}
	if !res.Confirmed {
		// Never go on to "done" for a prompt the agent did not take.
		if !s.unstarted {
			note = "unconfirmed: " + res.Reason
			_ = env.update(ctx, s.id, func(t *state.Task) { t.Delivery = note })
			return &errOutcome{outcome{status: state.StatusFailed, reason: "the agent did not take the prompt (" + res.Reason + ")"}}
		}
		// No sign of a turn yet (a slow agent, a loaded machine): the
		// monitor waits for one; a text still in the composer gets its
		// last Enters there, a lost one is typed again once, and a turn
		// that never begins is never done (see awaitStart).
		note = "not confirmed yet (" + res.Reason + "); waiting for the turn to begin"
	}
	return env.setStatus(ctx, s.id, state.StatusRunning, "delivered ("+note+")", func(t *state.Task) { t.Delivery = note })
}

// deliveryCheck tells, for each screen after an Enter, whether the agent
// took the prompt, and whether that was a sign that the turn began
// (supervisor.unstarted).
type deliveryCheck struct {
	s      *supervisor
	base   string // the screen before the paste
	sig    string // the text's first line to look for
	shown  *transcriptShows
	queued bool // taken by an agent still starting: not yet a turn
}

func (c *deliveryCheck) accepted(screen string) bool {
	s := c.s
	if s.mon.HookNow() != nil {
		// A quick turn ended while its delivery was confirmed: the
		// agent's own word that it took the prompt.
		s.unstarted = false
		return true
	}
	if inComposer(s.prof, screen, c.sig) {
		return false // the text still sits in the composer
	}
	d := profile.Detect(s.prof, screen)
	switch d.State {
	case profile.StateBusy:
		s.unstarted = false
		return true
	case profile.StateNeedsInput:
		// An approval belongs to the turn; a trust dialog comes before
		// it (the prompt waits behind it, or is lost).
		if len(d.TrustKeys) == 0 {
			s.unstarted = false
		}
		return true
	case profile.StateExited:
		return true
	case profile.StateStarting:
		// The agent took the text while it still starts (Codex:
		// "Waiting for startup"): queued, not yet a turn; the monitor
		// waits for the turn to begin. A blank screen (a CLI switching
		// views) is no sign yet.
		c.queued = d.Field == "starting" && screen != c.base
		return c.queued
	}
	if c.sig == "" {
		return screen != c.base
	}
	// Idle again already (a quick turn): the prompt must show in the
	// transcript above the composer, or it was lost (a CLI whose input
	// was not live yet shows only a changed placeholder).
	if echoed(s.prof, screen, c.sig) {
		s.unstarted = s.prof.EchoBeforeTurn
		return true
	}
	// The echo scrolled off already (a long text, a quick turn): the
	// transcript shows the text. For a TUI that is no sign of a turn (its
	// composer drew the text before Enter, and a lost prompt leaves the
	// same bytes): the monitor waits for one. A shell (IdleCommands)
	// echoes what it runs, once, as it runs it.
	if c.shown.check() {
		if len(s.prof.IdleCommands) > 0 {
			s.unstarted = false
		}
		return true
	}
	return false
}

// inComposer reports whether screen is p's ready screen with the text
// whose signature is sig still in its composer (not submitted).
func inComposer(p *profile.Profile, screen, sig string) bool {
	d := profile.Detect(p, screen)
	return d.State == profile.StateReady && ((sig != "" && strings.Contains(d.Line, sig)) || strings.Contains(d.Line, "[Pasted text"))
}

// echoed reports whether the text whose signature is sig shows in the
// transcript of a ready screen and not in its composer. A
// line in the same bordered box as the ready line (opencode's "┃ text"
// above "┃ Build · model") is the composer, not the transcript.
func echoed(p *profile.Profile, screen, sig string) bool { return echoCount(p, screen, sig) > 0 }

// echoCount is how many transcript lines of a ready screen show the text
// whose signature is sig (see echoed); 0 when the screen cannot tell.
func echoCount(p *profile.Profile, screen, sig string) int {
	d := profile.Detect(p, screen)
	if sig == "" || (d.State != profile.StateReady && d.State != profile.StateError) || strings.Contains(d.Line, sig) {
		// No screen to tell, or the text still in the composer: whatever
		// else shows it (a terminal's echo of keys typed before the
		// agent drew its UI) is no transcript.
		return 0
	}
	lead, _ := utf8.DecodeRuneInString(strings.TrimSpace(d.Line))
	boxed := strings.ContainsRune("│┃║▌▐", lead)
	n := 0
	for _, l := range strings.Split(tmuxctl.StripEscapes(screen), "\n") {
		l = strings.TrimRight(l, " \t\r")
		if l == d.Line || !strings.Contains(l, sig) {
			continue
		}
		if first, _ := utf8.DecodeRuneInString(strings.TrimSpace(l)); boxed && first == lead {
			continue
		}
		n++
	}
	return n
}

// deliverySignature is a piece of the text's first line that would show in
// a composer that still holds it.
func deliverySignature(text string) string {
	l := FirstLine(text, 160)
	r := []rune(l)
	if len(r) > 24 {
		r = r[:24]
	}
	return strings.TrimSpace(string(r))
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
		obs, err := s.mon.Wait(ctx, GoalTurnEnd, since)
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

// dialog handles a dialog shown during a turn: a trust or first-run dialog
// (Codex shows its folder dialog seconds after start-up, with the prompt
// queued behind it) as before ready; an approval (it belongs to the turn)
// answered by a matching approve rule, else left to the user.
func (s *supervisor) dialog(ctx context.Context, d profile.Detection, obs Observation, rules []*regexp.Regexp) error {
	env := s.env
	if len(d.TrustKeys) > 0 {
		if s.set.YesTrust {
			if err := s.acceptTrust(ctx, ctx, d); err != nil {
				return err
			}
		} else if err := s.needsInput(ctx, d, obs); err != nil {
			return err
		}
		s.graceFrom = time.Now()
		if s.unstarted {
			if screen, err := env.TC.CaptureScreen(ctx, s.pane); err == nil {
				s.echoBase = echoCount(s.prof, screen, s.sig)
			}
		}
		return nil
	}
	s.unstarted = false
	rule := matchRule(rules, d.Question+"\n"+d.Line)
	if rule == "" {
		return s.needsInput(ctx, d, obs)
	}
	t, _ := env.task(ctx, s.id)
	env.journal(ctx, t, "auto-answer", fmt.Sprintf("approved (rule %q): %s", rule, d.Question))
	_ = env.update(ctx, s.id, func(t *state.Task) {
		t.AddTurn(env.now(), "auto-approved: "+dialogLine(s.prof, d.Question))
	})
	if err := env.TC.SendKeys(ctx, s.pane, "Enter"); err != nil {
		return err
	}
	_, err := s.mon.Wait(ctx, GoalLeaveInput, time.Now())
	return err
}

// deliveryStart is when the delivery of the task's current turn began, as
// far as its history tells: the status change before the last "delivered"
// one (the delivery is recorded once confirmed, after a quick turn may
// have ended). Zero when the history has none.
func deliveryStart(t *state.Task) time.Time {
	for i := len(t.History) - 1; i > 0; i-- {
		if t.History[i].Status == state.StatusRunning && strings.HasPrefix(t.History[i].Reason, "delivered") {
			return t.History[i-1].Time
		}
	}
	return time.Time{}
}

// awaitStart handles an idle screen (obs) seen before any sign that the
// delivered prompt began a turn, and returns to the monitor loop (nil) once
// there is something new to look at:
//   - the prompt still in the composer (put back or left there by an agent
//     that was still starting): Enter, up to composerEnters times, never a
//     second paste; then the task fails saying so;
//   - the prompt in the transcript (a turn quicker than the captures):
//     started (for a profile with EchoBeforeTurn, after echoWait without a
//     busy screen);
//   - an empty composer: wait up to startGrace for a sign (a queued prompt
//     begins within seconds); if none comes, the prompt was lost: it is
//     typed again once, and recorded so; lost again, the task fails.
func (s *supervisor) awaitStart(ctx context.Context, obs Observation) error {
	env := s.env
	screen := obs.Screen
	for {
		switch {
		case inComposer(s.prof, screen, s.sig):
			if s.enters >= composerEnters {
				return &errOutcome{outcome{status: state.StatusFailed, obs: obs, reason: fmt.Sprintf(
					"the agent did not take the prompt: it is still in the composer after %d more Enter presses", s.enters)}}
			}
			s.enters++
			note := fmt.Sprintf("the prompt was still in the composer when the agent became idle: pressed Enter (%d of %d)", s.enters, composerEnters)
			s.record(ctx, note)
			if err := env.TC.SendKeys(ctx, s.pane, "Enter"); err != nil {
				return err
			}
			return s.waitStart(ctx, 5*time.Second)
		case echoCount(s.prof, screen, s.sig) > s.echoBase:
			if s.prof.EchoBeforeTurn && !s.echoWait {
				s.echoWait = true
				return s.waitStart(ctx, echoWait)
			}
			s.unstarted = false
			return nil
		}
		waited := time.Since(s.graceFrom)
		if waited < startGrace {
			if err := s.waitStart(ctx, startGrace-waited); err != nil {
				return err
			}
			if !s.unstarted {
				return nil
			}
			var err error
			if screen, err = env.TC.CaptureScreen(ctx, s.pane); err != nil {
				return err
			}
			continue
		}
		if s.retyped {
			return &errOutcome{outcome{status: state.StatusFailed, obs: obs, reason: fmt.Sprintf(
				"the agent did not take the prompt: no turn began within %s of typing it a second time (the composer is empty)", startGrace)}}
		}
		s.retyped = true
		s.record(ctx, fmt.Sprintf("the prompt was lost: no turn began within %s and the composer is empty; typing it again (once)", startGrace))
		return s.redeliver(ctx)
	}
}

// waitStart waits up to d for a sign that the prompt began a turn (or a
// dialog, or the pane's death, which the monitor loop then handles). A
// wait that runs out is no error.
func (s *supervisor) waitStart(ctx context.Context, d time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	obs, err := s.mon.Wait(wctx, GoalTurnStart, s.sent)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil
		}
		return err
	}
	if obs.SawBusy || obs.Via == "hook" {
		s.unstarted = false
	}
	return nil
}

// redeliver types the prompt of this turn once more (it was lost).
func (s *supervisor) redeliver(ctx context.Context) error {
	env := s.env
	payload := s.payload
	res, err := env.TC.Deliver(ctx, s.pane, payload, tmuxctl.DeliverOptions{
		EnterDelay: s.prof.EnterDelay.Duration, Raw: s.prof.PasteRaw, LeaveMode: true, Nudges: 2,
		Accepted: func(screen string) bool {
			if inComposer(s.prof, screen, s.sig) {
				return false
			}
			d := profile.Detect(s.prof, screen)
			if d.State == profile.StateBusy || (d.State == profile.StateNeedsInput && len(d.TrustKeys) == 0) || echoCount(s.prof, screen, s.sig) > s.echoBase {
				s.unstarted = false
				return true
			}
			return d.State == profile.StateNeedsInput || d.State == profile.StateExited
		},
		NudgeIf: func(screen string) bool { return inComposer(s.prof, screen, s.sig) },
	})
	if err != nil {
		return err
	}
	s.sent, s.graceFrom = time.Now(), time.Now()
	note := fmt.Sprintf("typed again: confirmed after %d Enter in %s", res.Enters, res.Elapsed.Round(time.Millisecond))
	if !res.Confirmed {
		note = "typed again, unconfirmed: " + res.Reason
	}
	_ = env.update(ctx, s.id, func(t *state.Task) { t.Delivery += "; " + note })
	return nil
}

// record notes a step of the delivery in the task's turns and journal.
func (s *supervisor) record(ctx context.Context, note string) {
	env := s.env
	_ = env.update(ctx, s.id, func(t *state.Task) { t.AddTurn(env.now(), note) })
	if t, err := env.task(ctx, s.id); err == nil {
		env.journal(ctx, t, "delivery", note)
	}
	env.say("task %s: %s", s.id, note)
}

// dialogLine is the line of a dialog that asks. The dialog's first menu,
// needs-input or trust line ends the search; a trust line that is not a
// menu item is itself the question (the sim's "Do you trust the files in
// this folder?"). Above it (the question's text also holds what the agent
// printed before it), the last line that asks — it holds a '?' — wins
// (Claude's "Quick safety check: Is this a project you … trust?" above
// "❯ 1. Yes, I trust this folder"); else the last non-blank line that is
// not a menu item.
func dialogLine(p *profile.Profile, q string) string {
	if !p.Compiled() {
		return FirstLine(q, 160)
	}
	lines := strings.Split(q, "\n")
	stop := len(lines)
	for i, l := range lines {
		if p.MatchesNeedsInput(l) || p.MatchesTrust(l) {
			stop = i
			break
		}
	}
	if stop < len(lines) && p.MatchesTrust(lines[stop]) && !menuItem.MatchString(lines[stop]) {
		return textutil.ClipRunes(strings.TrimSpace(lines[stop]), 160)
	}
	asks, last := "", ""
	for _, l := range lines[:stop] {
		if strings.TrimSpace(l) == "" || menuItem.MatchString(l) {
			continue
		}
		last = l
		if strings.Contains(l, "?") {
			asks = l
		}
	}
	if asks != "" {
		last = asks
	}
	if last == "" {
		return FirstLine(q, 160)
	}
	return textutil.ClipRunes(strings.TrimSpace(last), 160)
}

// menuItem is a numbered choice of a dialog ("❯ 1. Yes", "  2. No",
// "› 1. Trust and continue").
var menuItem = regexp.MustCompile(`^\s*[❯›>●]?\s*\d+\.\s`)

// matchRule returns the first rule that matches the dialog's text as a
// whole or any one of its lines (so an anchored rule such as ^Create works
// when the agent printed something above its question).
func matchRule(rules []*regexp.Regexp, text string) string {
	lines := strings.Split(text, "\n")
	for _, r := range rules {
		if r.MatchString(text) {
			return r.String()
		}
		for _, l := range lines {
			if r.MatchString(strings.TrimSpace(l)) {
				return r.String()
			}
		}
	}
	return ""
}

// conclude records the final outcome of a supervision and maps it to the
// error that sets the exit code.
func (s *supervisor) conclude(parent, tctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	ctx := context.WithoutCancel(parent)
	eo, stop := s.outcomeOf(ctx, parent, err)
	if eo == nil {
		return stop
	}
	o := eo.o
	end := s.turnEnd(ctx, o)
	if o.status == state.StatusNeedsInput {
		if t, _ := s.env.task(ctx, s.id); t != nil {
			s.env.journal(ctx, t, "needs-input", o.reason)
		}
		return fmt.Errorf("task %s needs input: %s (answer with 'runner attach %s', then 'runner resume %s'): %w", s.id, dialogLine(s.prof, o.reason), s.id, s.id, exit.ErrNeedsInput)
	}
	more, final := s.recordTurnEnd(ctx, parent, o, end)
	if more > 0 {
		s.env.say("task %s: turn done; %d message(s) waiting", s.id, more)
		return errMoreMessages
	}
	if final != nil {
		s.env.journal(ctx, final, "status", string(o.status)+": "+o.reason)
		if o.status == state.StatusDone && s.set.Commit {
			s.commit(ctx)
		}
		// The notification tells about this turn's end, whatever happens
		// to the task after.
		s.env.notify(ctx, final, s.set)
		if o.status == state.StatusDone && parent.Err() == nil && s.release(ctx, !o.keepQueue) {
			return errMoreMessages
		}
	}
	switch o.status {
	case state.StatusDone:
		return nil
	case state.StatusTimeout:
		return fmt.Errorf("task %s: %s (the pane is left for inspection: runner attach %s): %w", s.id, o.reason, s.id, ErrTaskTimeout)
	case state.StatusCancelled:
		return fmt.Errorf("task %s: %s: %w", s.id, o.reason, ErrCancelled)
	}
	return fmt.Errorf("task %s %s: %s: %w", s.id, o.status, o.reason, ErrTaskFailed)
}

// outcomeOf maps the error a supervision ended with to the outcome to
// record. An interruption (SIGINT/SIGTERM) is recorded here and returns
// no outcome, only the error to exit with.
func (s *supervisor) outcomeOf(ctx, parent context.Context, err error) (*errOutcome, error) {
	env := s.env
	var eo *errOutcome
	switch {
	case errors.As(err, &eo):
		return eo, nil
	case errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil:
		return &errOutcome{outcome{status: state.StatusTimeout, reason: "the task did not finish before its --timeout"}}, nil
	case errors.Is(err, ErrPaneGone):
		return &errOutcome{outcome{status: state.StatusFailed, reason: err.Error()}}, nil
	case errors.Is(err, tmuxctl.ErrNotFound):
		// The pane or server vanished during a delivery or a key press.
		return &errOutcome{outcome{status: state.StatusFailed, reason: fmt.Sprintf("pane %s: %v (the window was closed or the tmux server stopped): %v", s.pane, ErrPaneGone, err)}}, nil
	case parent.Err() == nil:
		return &errOutcome{outcome{status: state.StatusFailed, reason: err.Error()}}, nil
	}
	// Interrupted: the pane is left as it is.
	t, _ := env.task(ctx, s.id)
	if t != nil && t.Status.IsTerminal() {
		// Ended by another process (runner cancel), which stopped us.
		return nil, fmt.Errorf("task %s ended while supervised: %s (%s): %w", s.id, t.Status, lastReason(t), parent.Err())
	}
	if t != nil {
		if s.set.Detached {
			// A detached supervisor that is stopped leaves the task
			// to be resumed.
			_ = env.setStatus(ctx, s.id, state.StatusOrphaned, "supervisor stopped", nil)
		} else {
			_ = env.finish(ctx, s.id, state.StatusCancelled, "interrupted; the agent's pane is left running", nil)
		}
	}
	return nil, fmt.Errorf("task %s interrupted; the agent's pane is left running (runner attach %s): %w", s.id, s.id, parent.Err())
}

// turnText is what a turn's end records: the agent's answer (its hook's,
// else the screen's), its session, the screen (or history) it was read
// from, and a one-line summary.
type turnText struct {
	answer, session, screen, summary string
	byHook                           bool
}

// turnEnd reads the end of the turn: from the hook's event when it has the
// answer (no capture needed: the record is written at once), else from the
// last 200 lines of history plus the screen (an agent that died leaves its
// last words above tmux's "Pane is dead" line, which scrolls the screen).
func (s *supervisor) turnEnd(ctx context.Context, o outcome) turnText {
	tt := turnText{screen: o.obs.Screen}
	if h := o.obs.Hook; h != nil {
		tt.answer, tt.session = strings.TrimSpace(h.Answer), h.Session
		tt.byHook = h.Answer != ""
	}
	if tt.answer == "" {
		if hist, err := s.env.TC.Capture(ctx, s.pane, tmuxctl.CaptureOptions{Start: "-200", End: "-"}); err == nil {
			tt.screen = hist
		}
		if o.status == state.StatusDone || o.status == state.StatusFailed {
			tt.answer = profile.ScreenAnswer(s.prof, tt.screen)
		}
	}
	tt.summary = textutil.FirstLine(tt.answer)
	if tt.summary == "" {
		t, _ := s.env.task(ctx, s.id)
		tt.summary = turnSummary(s.prof, tt.screen, t)
	}
	tt.summary = textutil.ClipRunes(tt.summary, 160)
	return tt
}

// recordTurnEnd records the end of the turn and looks at the queue in one
// update: a message that arrives while the agent works is either seen here
// (more > 0: delivered as the next turn) or waits in the queue, which this
// supervisor looks at again before it lets go of the task (release). final
// is the task as recorded; nil when another process ended it first (a
// cancel wins) or nothing was recorded.
func (s *supervisor) recordTurnEnd(ctx, parent context.Context, o outcome, tt turnText) (more int, final *state.Task) {
	env := s.env
	var dropped []*state.Message
	_ = env.updateDurably(ctx, "task "+s.id+": the end of the turn ("+string(o.status)+")", func(st *state.State) error {
		more, final, dropped = 0, nil, nil
		t := st.Task(s.id)
		if t == nil || t.Status.IsTerminal() {
			return nil // a cancel from another process wins
		}
		if tt.byHook {
			t.ResultTail = tailLines(tt.answer, 20)
		} else {
			t.ResultTail = tailLines(tt.screen, 20)
		}
		t.ExitCode, t.Question, t.Answer = o.code, "", tt.answer
		if tt.session != "" {
			t.AgentSession = tt.session
		}
		if tt.summary != "" || tt.answer != "" {
			t.AddTurnAnswer(env.now(), tt.summary, tt.answer)
		}
		if o.status == state.StatusDone && parent.Err() == nil && !o.keepQueue {
			if more = len(st.MessagesFor(s.id, state.MessagePending)); more > 0 {
				return t.SetStatus(state.StatusReady, env.now(), fmt.Sprintf("turn done (%s); %d message(s) to deliver", o.reason, more))
			}
		}
		if o.status != state.StatusDone {
			dropped = dropQueue(st, s.id, env.now(), fmt.Sprintf("task %s ended %s before taking it", s.id, o.status))
		}
		err := t.SetStatus(o.status, env.now(), o.reason)
		c := *t
		final = &c
		return err
	})
	env.journalDropped(ctx, dropped)
	if more > 0 {
		final = nil
	}
	return more, final
}

func lastReason(t *state.Task) string {
	if len(t.History) == 0 {
		return ""
	}
	return t.History[len(t.History)-1].Reason
}

// commit runs the post-task commit protocol and records its outcome.
func (s *supervisor) commit(ctx context.Context) {
	env := s.env
	t, err := env.task(ctx, s.id)
	if err != nil {
		return
	}
	res, err := gitsnap.Commit(ctx, t.Dir, gitsnap.CommitOptions{TaskID: t.ID, Task: t.Text, Project: t.Project, Agent: t.Agent,
		Branch: s.set.CommitBranch, All: s.set.CommitAll})
	note := ""
	switch {
	case err != nil:
		note = "no commit: " + err.Error()
	case res.Outcome == gitsnap.NothingToCommit:
		note = "no commit: nothing changed"
	default:
		note = fmt.Sprintf("committed %s on %s", shortHash(res.Commit), res.Branch)
	}
	_ = env.update(ctx, s.id, func(t *state.Task) {
		if res != nil {
			t.Commit = res.Commit
		}
		t.History = append(t.History, state.StatusChange{Status: t.Status, Time: env.now(), Reason: note})
	})
	env.journal(ctx, t, "commit", note)
	env.say("task %s: %s", s.id, note)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// notify runs the notification command, bounded in time, with the task in
// its environment; a failure is journaled, never fatal.
func (env *Env) notify(ctx context.Context, t *state.Task, set RunSettings) {
	env.tmuxMessage(ctx, t, set)
	if len(set.Notify) == 0 {
		return
	}
	d := set.NotifyTimeout
	if d <= 0 {
		d = 10 * time.Second
	}
	nctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(nctx, set.Notify[0], set.Notify[1:]...)
	code := ""
	if t.ExitCode != nil {
		code = strconv.Itoa(*t.ExitCode)
	}
	cmd.Env = append(os.Environ(), "RUNNER_TASK_ID="+t.ID, "RUNNER_STATUS="+string(t.Status), "RUNNER_PROJECT="+t.Project,
		"RUNNER_EXIT="+strconv.Itoa(TaskExitCode(t))+"", "RUNNER_AGENT_EXIT="+code, "RUNNER_RESULT_FILE="+resultFile(env, t))
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		env.journal(ctx, t, "notify-failed", fmt.Sprintf("%s: %v: %s", set.Notify[0], err, strings.TrimSpace(string(out))))
		env.say("task %s: notify command failed: %v", t.ID, err)
		return
	}
	env.journal(ctx, t, "notify", set.Notify[0]+" ran for status "+string(t.Status))
}

// resultFile writes the task's result tail to a file for hooks.
func resultFile(env *Env, t *state.Task) string {
	p := env.Store.TaskFile("log", t.ID) + ".result"
	_ = os.WriteFile(p, []byte(t.ResultTail), 0o600)
	return p
}

// TaskExitCode is the runner exit code a task's status stands for.
func TaskExitCode(t *state.Task) int {
	switch t.Status {
	case state.StatusDone:
		return exit.ExitOK
	case state.StatusTimeout:
		return exit.ExitTimeout
	case state.StatusNeedsInput:
		return exit.ExitNeedsInput
	}
	return exit.ExitFailed
}

// tailLines returns the last n non-blank lines of s.
func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		l := strings.TrimRight(lines[i], " ")
		if strings.Trim(l, "╭╮╰╯─━│┃ ") == "" {
			continue // blank, or a box border
		}
		// A box row padded to the terminal width: drop the padding.
		if strings.HasSuffix(l, "│") {
			l = strings.TrimRight(strings.TrimSuffix(l, "│"), " ") + " │"
		}
		out = append(out, textutil.ClipRunes(l, 300))
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return strings.Join(out, "\n")
}

// turnSummary is a one-line summary of the turn: the last line of the
// screen that is neither UI chrome (box borders, prompts, spinners,
// footers) nor blank.
func turnSummary(p *profile.Profile, screen string, t *state.Task) string {
	lines := strings.Split(tmuxctl.StripEscapes(screen), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(strings.Trim(lines[i], "│┃|╭╮╰╯─━ "))
		if l == "" || strings.HasPrefix(l, ">") || strings.HasPrefix(l, "❯") || strings.HasPrefix(l, "? for") ||
			strings.Contains(l, "esc to interrupt") || strings.HasPrefix(l, "Pane is dead") {
			continue
		}
		if strings.HasPrefix(l, "runner[") {
			continue
		}
		return textutil.ClipRunes(l, 120)
	}
	return ""
}

// release lets go of a task whose turn ended done, after its commit and
// notification: under the lock, a message that arrived meanwhile (it was
// only queued: `runner msg` does not take a task whose supervisor lives)
// makes the task ready for the next turn and release reports true;
// otherwise the task is left without a supervisor, for the next message to
// take.
func (s *supervisor) release(ctx context.Context, takeQueue bool) bool {
	env := s.env
	more := 0
	_ = env.updateDurably(ctx, "task "+s.id+": letting go of the task", func(st *state.State) error {
		more = 0
		t := st.Task(s.id)
		if t == nil || t.Status != state.StatusDone || t.SupervisorPID != os.Getpid() {
			return nil
		}
		if more = len(st.MessagesFor(s.id, state.MessagePending)); more > 0 && takeQueue {
			t.Ended = time.Time{}
			return t.SetStatus(state.StatusReady, env.now(), fmt.Sprintf("%d message(s) arrived as the turn ended", more))
		}
		more = 0
		t.SupervisorPID = 0
		return nil
	})
	if more > 0 {
		env.say("task %s: %d message(s) arrived as the turn ended", s.id, more)
	}
	return more > 0
}
