// Delivering a prompt: paste, confirm that the agent took it, and tell a
// turn that began from a prompt that was queued or lost.

package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

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
	if first && s.set.Awareness != messaging.AwarenessOff && !s.prof.NoAwareness {
		if block := messaging.RenderAwareness(st, t, messaging.AwarenessOptions{Mode: s.set.Awareness, MaxChars: s.set.AwarenessMax, Now: env.now()}); block != "" {
			payload = block + "\n" + text
		}
	}
	sig := deliverySignature(payload)
	// The turn this delivery starts: the hook event that ends it comes
	// after this point of the events file, in the agent's session.
	s.mon.Match = profile.TurnMatch{Since: time.Now(), EventsFrom: monitor.FileSize(s.mon.Events), Signature: sig}
	if t != nil {
		s.mon.Match.Session = t.AgentSession
	}
	// The screen before the paste: a screen still equal to it after Enter
	// means the text never arrived (the input was not live yet).
	base, err := s.tc.CaptureScreen(ctx, s.pane)
	if err != nil {
		return err
	}
	shown := &transcriptShows{file: t.Transcript, offset: monitor.FileSize(t.Transcript), sig: sig}
	waiting := func(screen string) bool { return inComposer(s.prof, screen, sig) }
	// Without markers (or a first line to look for) no sign of a turn
	// can be told from the screen: the turn counts as started.
	hasMarkers := len(s.prof.Ready) > 0 || len(s.prof.Busy) > 0
	s.payload, s.sig, s.unstarted, s.enters, s.echoWait = payload, sig, hasMarkers && sig != "", 0, false
	dc := &deliveryCheck{s: s, base: base, sig: sig, shown: shown}
	res, err := s.tc.Deliver(ctx, s.pane, payload, tmuxctl.DeliverOptions{
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
func (s *supervisor) awaitStart(ctx context.Context, obs monitor.Observation) error {
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
			if err := s.tc.SendKeys(ctx, s.pane, "Enter"); err != nil {
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
			if screen, err = s.tc.CaptureScreen(ctx, s.pane); err != nil {
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
	obs, err := s.mon.Wait(wctx, monitor.GoalTurnStart, s.sent)
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
	res, err := s.tc.Deliver(ctx, s.pane, payload, tmuxctl.DeliverOptions{
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
