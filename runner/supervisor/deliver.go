// Delivering a prompt: paste, confirm that the agent took it, and tell a
// turn that began from a prompt that was queued or lost.

package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/internal/untrusted"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Deliver pastes text (on a first turn, with the awareness block ahead of
// it; the turn counted before the paste: Book.Prompt), confirms the submission, and records the delivery and
// the task running. A prompt the agent did not visibly take is no error
// yet when the profile can tell a turn from its screen: MonitorTurn waits
// for the turn to begin (see awaitStart).
func (s *Supervisor) Deliver(ctx context.Context, text string, first bool) error {
	ready := s.ready
	s.ready = nil
	payload, t, err := s.Book.Prompt(ctx, text, first, ready)
	if err != nil {
		return err
	}
	payload, removed := tmuxctl.PasteText(payload) // what the pane will see
	sig := signature(payload)
	// The turn this delivery starts: the hook event that ends it comes
	// after this point of the events file, in the agent's session.
	m := profile.TurnMatch{Since: clock.Now(), EventsFrom: s.Mon.EventsOffset(), Signature: sig}
	transcript := ""
	if t != nil {
		m.Session, transcript = t.AgentSession, t.Transcript
	}
	s.Mon.Expect(m)
	shown := &transcriptShows{file: transcript, offset: monitor.FileSize(transcript), sig: sig}
	// Without markers (or a first line to look for) no sign of a turn
	// can be told from the screen: the turn counts as started.
	hasMarkers := len(s.Profile.Ready) > 0 || len(s.Profile.Busy) > 0
	s.payload, s.sig, s.unstarted, s.enters, s.echoWait = payload, sig, hasMarkers && sig != "", 0, false
	dc := &deliveryCheck{s: s, sig: sig, shown: shown}
	// A quick turn may end while its delivery is confirmed: its hook's
	// line wakes the confirmation (deliveryCheck.accepted takes it).
	written, stop := s.Mon.Written()
	defer stop()
	res, err := s.TC.Deliver(ctx, s.PaneID, payload, tmuxctl.DeliverOptions{
		EnterDelay: s.Profile.EnterDelay.Duration, Raw: s.Profile.PasteRaw, LeaveMode: true, Nudges: 2,
		Accepted: dc.accepted, Taken: dc.taken, TakenWithin: s.takenWithin(), Wake: written,
		// The screen before the paste: a screen still equal to it after
		// Enter means the text never arrived (the input was not live yet).
		Before: func(screen string) { dc.base = screen },
		// Enter again only while the text is visibly waiting in the
		// composer: never onto a dialog that appeared meanwhile.
		NudgeIf: func(screen string) bool { return inComposer(s.Profile, screen, sig) },
	})
	if err != nil {
		return err
	}
	s.sent, s.graceFrom = clock.Now(), clock.Now()
	note := fmt.Sprintf("confirmed after %d Enter in %s", res.Enters, res.Elapsed.Round(time.Millisecond))
	if dc.queued && s.unstarted {
		note = fmt.Sprintf("queued by the starting agent after %d Enter in %s", res.Enters, res.Elapsed.Round(time.Millisecond))
	}
	if removed > 0 {
		why := fmt.Sprintf("%d control character(s) removed from the text: no byte of a delivered text acts as a key", removed)
		s.Book.Journal(ctx, "delivery", why)
		note += "; " + why
	}
	if !res.Confirmed {
		// Never go on to "done" for a prompt the agent did not take.
		if !s.unstarted {
			note = "unconfirmed: " + res.Reason
			_ = s.Book.Update(ctx, func(t *state.Task) { t.Delivery = note })
			return end(state.StatusFailed, "the agent did not take the prompt ("+res.Reason+")", monitor.Observation{}, nil)
		}
		// No sign of a turn yet (a slow agent, a loaded machine): the
		// monitor waits for one; a text still in the composer gets its
		// last Enters there, a lost one is typed again once, and a turn
		// that never begins is never done (see awaitStart).
		note = "not confirmed yet (" + res.Reason + "); waiting for the turn to begin"
	}
	d := &delivered{reason: "delivered (" + note + ")", change: func(t *state.Task) {
		t.Delivery, t.TurnPrompt = note, &state.TurnPrompt{Signature: sig, EventsFrom: m.EventsFrom}
	}}
	if s.FoldRunning && dc.byHook && res.Confirmed {
		// The turn ended already: the end's write records the delivery
		// first, one write fewer (see delivered).
		d.at, s.delivered = s.Book.Now(), d
		return nil
	}
	return s.Book.SetStatus(ctx, state.StatusRunning, d.reason, d.change)
}

// hookGrace is how long the first look after Enter waits for the turn's
// hook, once the agent read the key, where its profile has a hook: a
// quick turn (the simulated agent's: its hook comes 3-6 ms after it read
// the key) ends within it, and its delivery is then confirmed by the hook
// with no look and recorded with the end in one write (FoldRunning). A
// longer turn's look comes this much later, which nothing waits on: its
// end does.
const hookGrace = 15 * time.Millisecond

// takenWithin is DeliverOptions.TakenWithin for this agent: hookGrace
// where its profile has a turn-end hook, none otherwise (a shell's
// quick command is confirmed by its screen at once).
func (s *Supervisor) takenWithin() time.Duration {
	if s.Profile.Hook == nil {
		return 0
	}
	return hookGrace
}

// deliveryCheck tells, for each screen after an Enter, whether the agent
// took the prompt, and whether that was a sign that the turn began
// (Supervisor.unstarted).
type deliveryCheck struct {
	s      *Supervisor
	base   string // the screen before the paste
	sig    string // the text's first line to look for
	shown  *transcriptShows
	queued bool // taken by an agent still starting: not yet a turn
	byHook bool // taken on the turn's hook: the turn ended already
}

// taken tells, with no screen, that the agent took the prompt: a quick
// turn ended while its delivery was confirmed (its hook's line came), the
// agent's own word. Asked before each look after an Enter, it saves the
// capture the look would take.
func (c *deliveryCheck) taken() bool {
	if c.s.Mon.HookNow() == nil {
		return false
	}
	c.s.unstarted, c.byHook = false, true
	return true
}

func (c *deliveryCheck) accepted(screen string) bool {
	s := c.s
	if c.taken() {
		return true
	}
	if inComposer(s.Profile, screen, c.sig) {
		return false // the text still sits in the composer
	}
	d := profile.Detect(s.Profile, screen)
	switch d.State {
	case profile.StateBusy, profile.StateLimitWait:
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
	if echoCount(s.Profile, screen, c.sig) > 0 {
		s.unstarted = s.Profile.EchoBeforeTurn
		return true
	}
	// The echo scrolled off already (a long text, a quick turn): the
	// transcript shows the text. For a TUI that is no sign of a turn (its
	// composer drew the text before Enter, and a lost prompt leaves the
	// same bytes): the monitor waits for one. A shell (IdleCommands)
	// echoes what it runs, once, as it runs it.
	if c.shown.check() {
		if len(s.Profile.IdleCommands) > 0 {
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

// echoCount is how many transcript lines of a ready screen show the text
// whose signature is sig, not its composer; 0 when the screen cannot
// tell. A line in the same bordered box as the ready line (opencode's
// "┃ text" above "┃ Build · model") is the composer, not the transcript.
func echoCount(p *profile.Profile, screen, sig string) int {
	d := profile.Detect(p, screen)
	if sig == "" || !d.State.Idle() || strings.Contains(d.Line, sig) {
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

// signature is a piece of the text's first line that would show in a
// composer that still holds it.
func signature(text string) string {
	r := []rune(textutil.Headline(text, 160))
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
func (s *Supervisor) awaitStart(ctx context.Context, obs monitor.Observation) error {
	screen := obs.Screen
	for {
		switch {
		case inComposer(s.Profile, screen, s.sig):
			if s.enters >= composerEnters {
				return end(state.StatusFailed, fmt.Sprintf(
					"the agent did not take the prompt: it is still in the composer after %d more Enter presses", s.enters), obs, nil)
			}
			s.enters++
			s.record(ctx, fmt.Sprintf("the prompt was still in the composer when the agent became idle: pressed Enter (%d of %d)", s.enters, composerEnters))
			if err := s.TC.SendKeys(ctx, s.PaneID, "Enter"); err != nil {
				return err
			}
			return s.waitStart(ctx, 5*time.Second)
		case echoCount(s.Profile, screen, s.sig) > s.echoBase:
			if s.Profile.EchoBeforeTurn && !s.echoWait {
				s.echoWait = true
				return s.waitStart(ctx, echoWait)
			}
			s.unstarted = false
			return nil
		}
		if waited := clock.Since(s.graceFrom); waited < startGrace {
			if err := s.waitStart(ctx, startGrace-waited); err != nil {
				return err
			}
			if !s.unstarted {
				return nil
			}
			var err error
			if screen, err = s.TC.CaptureScreen(ctx, s.PaneID); err != nil {
				return err
			}
			continue
		}
		if s.retyped {
			return end(state.StatusFailed, fmt.Sprintf(
				"the agent did not take the prompt: no turn began within %s of typing it a second time (the composer is empty)", startGrace), obs, nil)
		}
		s.retyped = true
		s.record(ctx, fmt.Sprintf("the prompt was lost: no turn began within %s and the composer is empty; typing it again (once)", startGrace))
		return s.redeliver(ctx)
	}
}

// waitStart waits up to d for a sign that the prompt began a turn (or a
// dialog, or the pane's death, which the monitor loop then handles). A
// wait that runs out is no error.
func (s *Supervisor) waitStart(ctx context.Context, d time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	obs, err := s.Mon.Wait(wctx, monitor.GoalTurnStart, s.sent)
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
func (s *Supervisor) redeliver(ctx context.Context) error {
	// The lost prompt's echo (an agent that drew it and never ran it:
	// Droid at times) is no sign of this one: only a new echo is, and for
	// a profile with EchoBeforeTurn only after a busy screen was awaited.
	if screen, err := s.TC.CaptureScreen(ctx, s.PaneID); err == nil {
		s.echoBase = echoCount(s.Profile, screen, s.sig)
	}
	s.echoWait = false
	res, err := s.TC.Deliver(ctx, s.PaneID, s.payload, tmuxctl.DeliverOptions{
		EnterDelay: s.Profile.EnterDelay.Duration, Raw: s.Profile.PasteRaw, LeaveMode: true, Nudges: 2,
		Accepted: func(screen string) bool {
			if inComposer(s.Profile, screen, s.sig) {
				return false
			}
			d := profile.Detect(s.Profile, screen)
			if d.State.Working() || (d.State == profile.StateNeedsInput && len(d.TrustKeys) == 0) {
				s.unstarted = false
				return true
			}
			if echoCount(s.Profile, screen, s.sig) > s.echoBase {
				s.unstarted = s.Profile.EchoBeforeTurn
				return true
			}
			return d.State == profile.StateNeedsInput || d.State == profile.StateExited
		},
		NudgeIf: func(screen string) bool { return inComposer(s.Profile, screen, s.sig) },
	})
	if err != nil {
		return err
	}
	s.sent, s.graceFrom = clock.Now(), clock.Now()
	note := fmt.Sprintf("typed again: confirmed after %d Enter in %s", res.Enters, res.Elapsed.Round(time.Millisecond))
	if !res.Confirmed {
		note = "typed again, unconfirmed: " + res.Reason
	}
	_ = s.Book.Update(ctx, func(t *state.Task) { t.Delivery += "; " + note })
	return nil
}

// record notes a step of the delivery in the task's turns and journal.
func (s *Supervisor) record(ctx context.Context, note string) {
	_ = s.Book.Update(ctx, func(t *state.Task) { t.AddTurn(s.Book.Now(), note) })
	s.Book.Journal(ctx, "delivery", note)
	s.Book.Say("task %s: %s", s.ID, note)
}

// transcriptShows reports, at most every 200 ms (else false), whether sig
// shows in the pane's transcript after offset, with escape sequences
// removed: the agent displayed the text it was given. With the composer
// empty again and no busy marker, that means the agent took the prompt
// and its turn already ended (a quick turn whose echo scrolled off the
// screen), whereas a prompt sent to an input that was not live never shows
// at all.
type transcriptShows struct {
	file   string
	offset int64
	sig    string
	last   time.Time
	seen   bool
}

func (ts *transcriptShows) check() bool {
	if ts.seen {
		return true
	}
	if ts.file == "" || ts.sig == "" || clock.Since(ts.last) < 200*time.Millisecond {
		return false
	}
	ts.last = clock.Now()
	f, err := untrusted.Open(ts.file)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(ts.offset, io.SeekStart); err != nil {
		return false
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return false
	}
	ts.seen = bytes.Contains(b, []byte(ts.sig)) || bytes.Contains([]byte(tmuxctl.StripEscapes(string(b))), []byte(ts.sig))
	return ts.seen
}
