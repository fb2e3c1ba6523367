// Package supervisor drives an agent's turn in its pane and decides what
// each thing the agent shows means for the task:
//
//   - WaitReady: the start-up, up to the agent's prompt, with trust and
//     first-run dialogs accepted (--yes-trust) or left to the user;
//   - Deliver: the prompt pasted, its submission confirmed, and told from a
//     prompt the agent queued while starting or lost;
//   - MonitorTurn: the turn watched to its end (the agent's hook, the
//     pane's death, its screen), approvals answered by rules, questions
//     recorded (needs_input), a prompt left in the composer pressed on or
//     typed again once;
//   - WaitIdlePrompt: the agent back at its prompt before a message turn;
//   - ReadTurnEnd: what the agent answered, from its hook or its screen;
//   - Conclude: the turn's end recorded, committed (--commit), notified,
//     the task let go of or kept for waiting messages, and the error that
//     sets the exit code.
//
// A phase ends with an *Ended error holding the Outcome to record, or with
// the error of a tmux call or the context. The Supervisor drives small
// interfaces, so each decision is unit-tested with a recorded sequence of
// observations: Pane (tmuxctl.Client), Watcher (a monitor.Monitor, through
// Watch), and Book and Ender (the task's record in the state: a
// taskbook.Book, which package runner makes).
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Pane is what the supervisor does to the agent's pane; *tmuxctl.Client
// satisfies it (the server here, or the task's host's).
type Pane interface {
	CaptureScreen(ctx context.Context, pane string) (string, error)
	Capture(ctx context.Context, pane string, opts tmuxctl.CaptureOptions) (string, error)
	SendKeys(ctx context.Context, pane string, keys ...string) error
	Deliver(ctx context.Context, pane, text string, opts tmuxctl.DeliverOptions) (tmuxctl.Delivery, error)
}

// Book is the task's record as the supervisor reads and writes it. Each
// change depends on the task alone and may run more than once.
type Book interface {
	// Task reads the task as recorded.
	Task(ctx context.Context) (*state.Task, error)
	// Update changes the task.
	Update(ctx context.Context, fn func(*state.Task)) error
	// SetStatus records a status change (fn, if set, changes the task
	// with it) unless the task already ended.
	SetStatus(ctx context.Context, st state.Status, reason string, fn func(*state.Task)) error
	// Journal appends an event about the task to the journal.
	Journal(ctx context.Context, kind, text string)
	// Say tells the user (the supervisor's log, or the terminal).
	Say(format string, args ...any)
	// Notify runs the task's notification for its current status.
	Notify(ctx context.Context, t *state.Task)
	// Prompt is what to paste for text: on a first turn, with the
	// awareness block ahead of it. It counts the turn (before the paste,
	// where the budget allows it; else an *Ended) and returns the task as
	// well. With ready, it records the task ready (as WaitReady found it,
	// unless it moved on) in the same write.
	Prompt(ctx context.Context, text string, first bool, ready *Ready) (string, *state.Task, error)
	// Pending is how many messages wait in the task's queue.
	Pending(ctx context.Context) int
	// Now is the time records are stamped with.
	Now() time.Time
	// Budgeted reports whether the task's tree has a token or dollar
	// budget: then what a turn used is read while it runs often, and
	// judged (LiveSpend).
	Budgeted(ctx context.Context) bool
	// LiveSpend records what the running turn used so far; with judge
	// (the tree has a budget), when that takes the tree past its budget,
	// the turns running in it (this one too) are ended and interrupted,
	// as at a turn's end.
	LiveSpend(ctx context.Context, sp state.Spend, judge bool)
}

// Settings are the task's run settings the decisions depend on.
type Settings struct {
	// ReadyTimeout bounds the start-up (WaitReady) and the wait for the
	// prompt before a message turn; zero means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// YesTrust accepts trust and first-run dialogs (--yes-trust).
	YesTrust bool
	// WaitInput waits for the user to answer a question (--wait-input)
	// rather than ending the supervision with needs_input.
	WaitInput bool
	// Detached: nobody waits on a terminal; a question is waited out.
	Detached bool
	// Approve answers an approval dialog that matches one of these.
	Approve []*regexp.Regexp
	// Commit runs the commit protocol after a turn that ended done
	// (--commit).
	Commit bool
	// UseHook: the agent's hook reports its turns (a CLI whose hook fires
	// after its screen settles gets the profile's hook grace for it).
	UseHook bool
}

// DefaultReadyTimeout is how long an agent may take to show its prompt
// when the task's settings give no --ready-timeout.
const DefaultReadyTimeout = 60 * time.Second

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

// Supervisor supervises one task's pane. Set the exported fields, then
// call its phases in turn; it keeps what the delivery left for the
// monitoring of the turn.
type Supervisor struct {
	ID       string
	Profile  *profile.Profile
	PaneID   string // the pane's tmux id (%N)
	TC       Pane
	Mon      Watcher
	Book     Book
	Settings Settings
	// AgentEnv looks up the agent's environment (HOME, CODEX_HOME), where
	// the files that record a turn's spend are found; nil when they are
	// not on this machine (a task on a host): then only a hook payload's
	// own usage is read.
	AgentEnv func(string) string
	// AgentPath, when set, maps a path the agent's hook names to where
	// the file is here (the task's copy of its CLI's directories).
	AgentPath func(string) string
	// FoldReady: WaitReady does not record the task ready by itself; the
	// next delivery records it with the turn it counts (Book.Prompt), in
	// one write, since nothing but a read comes between the two (a first
	// turn). A task that ends before a delivery never records it.
	FoldReady bool
	// Started, when set, is waited for by WaitReady after its first look
	// at the agent and before it records anything of the task or types
	// into its pane: the start of the task finished beside the wait (its
	// snapshot taken, the task recorded starting), so that the agent's
	// start-up is watched while its snapshot is taken. Its error ends the
	// wait.
	Started func(context.Context) error
	// StartChange, when set with Started, is asked instead of it where
	// the agent is found simply ready and its first delivery records that
	// (FoldReady): it waits for the start's snapshot and returns the change
	// that records the task starting (nil: recorded already) for that
	// write to make (Ready.Start), one write fewer, and what to call once
	// it is made.
	StartChange func(context.Context) (start func(*state.Task) error, recorded func(), err error)
	// Snapshotted, when set, is waited for before a turn's end is
	// recorded (Conclude): the commit of the snapshot captured as the task
	// started, written beside its first turn (launch.Started.Committed), so
	// that whoever reads the end finds the snapshot, and what the task
	// changed is looked at from it. Its error (recorded by it) is said.
	Snapshotted func(context.Context) error
	// ready is the ready status WaitReady found and left to the next
	// delivery (FoldReady).
	ready *Ready
	// FoldRunning: the turn's end is concluded by this supervisor, in
	// this process, after its delivery (a first turn, not detached): a
	// delivery whose turn's hook came while it was confirmed leaves the
	// record of the task running to the end's write (delivered).
	FoldRunning bool
	// delivered is that record, until the end's write makes it
	// (Conclude: TurnText.Delivered) or another write comes first
	// (recordDelivered).
	delivered *delivered
	// Wrote signals the agent's output (the monitor's Wrote; buffered):
	// a running turn's spend shown without a budget is read again only
	// after the agent wrote something, so a quiet agent costs nothing.
	// Nil: read by the clock alone.
	Wrote <-chan struct{}

	// treeBudgeted: whether the task's tree had a token or dollar budget
	// as the monitored turn started (nil: not looked up).
	treeBudgeted *bool

	// The prompt of the turn being monitored, as Deliver left it.
	payload string    // what was pasted
	sig     string    // signature(payload)
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
	// deadline is when the task's time runs out (StartClock).
	deadline time.Time
}

// Outcome is how a supervision phase ended: the status to record, why,
// what was seen last, and the agent's exit code when there is one.
type Outcome struct {
	Status state.Status
	Reason string
	Obs    monitor.Observation
	Code   *int
	// KeepQueue ends the supervision without delivering the queue (the
	// agent was not at its prompt for a message turn).
	KeepQueue bool
	// Reset is when the usage limit a limited turn ended on resets, as
	// the CLI said (zero: it did not).
	Reset time.Time
}

// Ended is the error a phase returns with the outcome to record.
type Ended struct{ Outcome }

func (e *Ended) Error() string { return string(e.Status) + ": " + e.Reason }

// end returns the *Ended error for an outcome.
func end(st state.Status, reason string, obs monitor.Observation, code *int) error {
	return &Ended{Outcome{Status: st, Reason: reason, Obs: obs, Code: code}}
}

// limited is the outcome of a turn that ended on the agent's usage or rate
// limit, told by line (the screen's, or the hook's answer).
func limited(line string, obs monitor.Observation) error {
	// The line without the CLI's glyphs and box ("● API Error: …",
	// "│ Usage limit reached …", a progress bar).
	line = strings.TrimLeftFunc(line, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '[' })
	if i := strings.Index(line, "   "); i > 0 {
		line = line[:i] // what follows a wide gap is the status line's rest
	}
	line = strings.TrimRight(line, "│┃ ")
	reason := "usage limit: " + textutil.Headline(line, 160)
	reset, ok := profile.ParseReset(line, clock.Now())
	if ok {
		reason += " (resets " + reset.Local().Format("2006-01-02 15:04:05") + ")"
	}
	return &Ended{Outcome{Status: state.StatusLimited, Reason: reason, Obs: obs, Reset: reset}}
}

// exited is the outcome of a pane whose agent exited.
func exited(obs monitor.Observation, format string) error {
	code := obs.Status
	return end(state.StatusExited, fmt.Sprintf(format, code), obs, &code)
}

func (s *Supervisor) readyTimeout() time.Duration {
	if d := s.Settings.ReadyTimeout; d > 0 {
		return d
	}
	return DefaultReadyTimeout
}

// WaitReady waits until the agent shows its prompt and records it ready.
// A trust dialog is accepted on YesTrust; any other question is recorded
// (see needsInput).
func (s *Supervisor) WaitReady(ctx context.Context) error {
	readyTimeout := s.readyTimeout()
	rctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	// Some CLIs draw their prompt before the input takes text: their
	// first ready screen must hold, with no output at all, for the
	// profile's ready_hold.
	ready := s.Mon.Held(s.Profile.ReadyHold.Duration)
	for {
		obs, err := ready.Wait(rctx, monitor.GoalReady, clock.Now())
		if err != nil {
			// The ready time's own deadline, not a tmux call's.
			if errors.Is(err, context.DeadlineExceeded) && rctx.Err() != nil && ctx.Err() == nil {
				return end(state.StatusTimeout, fmt.Sprintf("the agent was not ready within %s (--ready-timeout)%s", readyTimeout, busyMachine()), obs, nil)
			}
			return err
		}
		start, recorded, err := s.started(ctx, obs)
		if err != nil {
			return err
		}
		if obs.Dead {
			return exited(obs, "the agent exited with status %d before it was ready")
		}
		d := obs.Detection
		if d.State == profile.StateNeedsInput {
			if len(d.TrustKeys) > 0 && s.Settings.YesTrust {
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
		if u, ok := s.Profile.UnusableScreen(obs.Screen); ok {
			// Idle, but no prompt can get an answer (no model
			// configured): fail now rather than deliver.
			return end(state.StatusFailed, fmt.Sprintf("%s cannot answer a prompt: %s (rule %s); set its model or provider up (run it once by hand), then dispatch again",
				s.Profile.Name, textutil.Headline(u.Line, 160), u.Rule), obs, nil)
		}
		why := "the agent is ready (" + d.Field + ")"
		if s.FoldReady {
			s.ready = &Ready{Reason: why, At: s.Book.Now(), Start: start, Recorded: recorded}
			return nil
		}
		return s.Book.SetStatus(ctx, state.StatusReady, why, nil)
	}
}

// started waits, after WaitReady's look at the agent (obs), for the start
// finished beside the wait (Started). Where the agent is simply ready and
// its first delivery records that (FoldReady), the task's record of its
// start is folded into that write too (StartChange): start is the change
// that records it (nil: recorded already), recorded to call once written.
func (s *Supervisor) started(ctx context.Context, obs monitor.Observation) (start func(*state.Task) error, recorded func(), err error) {
	if s.Started == nil {
		return nil, nil, nil
	}
	plain := !obs.Dead && obs.Detection.State != profile.StateNeedsInput
	if plain {
		_, unusable := s.Profile.UnusableScreen(obs.Screen)
		plain = !unusable
	}
	if plain && s.FoldReady && s.StartChange != nil {
		return s.StartChange(ctx)
	}
	return nil, nil, s.Started(ctx)
}

// Ready is the ready status WaitReady found, recorded with the delivery
// that follows it (Supervisor.FoldReady): why, and when it was found.
type Ready struct {
	Reason string
	At     time.Time
	// Start, when set, records the task starting (its snapshot and pane),
	// in the same write, ahead of the ready status; Recorded is called
	// once that write is made.
	Start    func(*state.Task) error
	Recorded func()
}

// expectRecorded sets the monitor on a turn this supervisor did not
// deliver (send --detach, resume), as its record tells it: the turn began
// before its delivery was recorded; with the delivery's prompt and place
// in the events file (Task.TurnPrompt), its hook events are told apart
// and what it used so far is read (watchLive) as by the supervisor that
// delivered it.
func (s *Supervisor) expectRecorded(ctx context.Context, since time.Time) {
	m := profile.TurnMatch{Since: since, EventsFrom: -1}
	if t, err := s.Book.Task(ctx); err == nil {
		m.Session = t.AgentSession
		if at := deliveryStart(t); !at.IsZero() {
			m.Since = at
		}
		if tp := t.TurnPrompt; tp != nil {
			m.Signature, m.EventsFrom, s.sig = tp.Signature, tp.EventsFrom, tp.Signature
		}
	}
	s.Mon.Expect(m)
}

// MonitorTurn waits for the end of the turn and returns its outcome
// (*Ended). since is when the turn began; zero means a second ago, or for
// a turn this supervisor did not deliver, its recorded delivery.
func (s *Supervisor) MonitorTurn(ctx context.Context, since time.Time) error {
	if since.IsZero() {
		since = clock.Now().Add(-time.Second)
	}
	if s.Mon.Expecting().Since.IsZero() {
		s.expectRecorded(ctx, since)
	}
	tctx, stopTurn := context.WithCancelCause(ctx)
	defer stopTurn(nil)
	defer s.watchLive(tctx, stopTurn)()
	for {
		obs, err := s.Mon.Wait(tctx, monitor.GoalTurnEnd, since)
		if err != nil {
			if errors.Is(context.Cause(tctx), errStoppedByBudget) && ctx.Err() == nil {
				return s.budgetStopped(ctx)
			}
			return err
		}
		if obs.Dead {
			return exited(obs, "the agent exited with status %d")
		}
		if obs.SawBusy || obs.Via == "hook" {
			s.unstarted = false
		}
		d := obs.Detection
		switch d.State {
		case profile.StateNeedsInput:
			s.recordDelivered(ctx) // a question is recorded as it comes
			if line, ok := s.limitDialog(obs.Screen); ok {
				if err := s.stopLimitDialog(ctx, d); err != nil {
					return err
				}
				return limited(line, obs)
			}
			if err := s.dialog(ctx, d, obs); err != nil {
				return err
			}
			continue
		case profile.StateLimited:
			return limited(d.Line, obs)
		case profile.StateLimitWait:
			// The CLI would wait the limit out by itself, its retries
			// counting toward the task's time: interrupt it; runner
			// waits (or ends the task) as --on-limit says, and a
			// "continue" later has the CLI try again.
			if len(s.Profile.InterruptKeys) > 0 {
				if err := s.TC.SendKeys(ctx, s.PaneID, s.Profile.InterruptKeys...); err != nil {
					return err
				}
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, _ = s.Mon.Wait(wctx, monitor.GoalReady, clock.Now())
				cancel()
			}
			return limited(d.Line, obs)
		case profile.StateError:
			reason := "the agent reported an error: " + textutil.Headline(d.Line, 160)
			if r := s.ruleOf(obs); r != "" {
				reason += " (" + strings.TrimPrefix(r, ", ") + ")"
			}
			return end(state.StatusFailed, reason, obs, nil)
		}
		if s.unstarted {
			// Idle, but the prompt has not begun a turn: it waits in the
			// composer, was queued, or was lost.
			if err := s.awaitStart(ctx, obs); err != nil {
				return err
			}
			continue
		}
		return s.turnDone(ctx, obs)
	}
}

// budgetStopped is the outcome of a turn whose task a budget ended while
// its screen went on showing a turn (see budgetStopGrace): the record's.
func (s *Supervisor) budgetStopped(ctx context.Context) error {
	reason := fault.BudgetReason + "the tree's budget was reached"
	if t, err := s.Book.Task(ctx); err == nil && t.LastReason() != "" {
		reason = t.LastReason()
	}
	s.Book.Say("task %s: its screen did not show the turn's end %s after a budget stopped it: the turn ends here", s.ID, budgetStopGrace)
	return end(state.StatusFailed, reason, monitor.Observation{}, nil)
}

// turnDone is the outcome of a turn that ended on an idle screen or its
// hook: failed for a command that exited non-zero, else done.
func (s *Supervisor) turnDone(ctx context.Context, obs monitor.Observation) error {
	d := obs.Detection
	if h := obs.Hook; h != nil {
		// Claude Code answers a turn its usage limit ended with the limit's
		// words, and its Stop hook runs all the same.
		if line, ok := s.Profile.LimitLine(h.Answer); ok {
			return limited(line, obs)
		}
		// pi's hook says the run ended on an error, and which.
		if h.Error != "" && profile.IsLimitError(h.Error) {
			return limited(textutil.FirstLine(h.Error), obs)
		}
		// Factory Droid runs its Stop hook after a turn that failed too
		// (its provider unreachable, a 429 it gave up on): its record says.
		if err := s.recordedFailure(ctx, *h, obs); err != nil {
			return err
		}
	}
	if d.ExitStatus != nil && *d.ExitStatus != 0 {
		return end(state.StatusFailed, fmt.Sprintf("the command exited with status %d", *d.ExitStatus), obs, d.ExitStatus)
	}
	if h := s.Profile.Hook; obs.Via == "screen" && h != nil && h.Grace.Duration > 0 && s.Settings.UseHook {
		// The hook of a CLI that fires after its screen settles: its
		// record has the agent's own answer.
		if ev := s.Mon.WaitHook(ctx, h.Grace.Duration); ev != nil {
			obs.Via, obs.Hook = "hook", ev
		}
	}
	return end(state.StatusDone, "the agent finished its turn ("+obs.Via+s.ruleOf(obs)+")", obs, d.ExitStatus)
}

// ruleOf names the profile rule that read the screen of obs, with where it
// is written (", rule ready[1] at claude.toml:52"), for a record that the
// screen decided; "" when no rule did (a hook, the pane's death).
func (s *Supervisor) ruleOf(obs monitor.Observation) string {
	r := obs.Detection.Rule
	if obs.Via == "hook" || r == "" {
		return ""
	}
	out := ", rule " + r
	if o := s.Profile.Origin(r); o.File != "" {
		o.Builtin = false
		out += " at " + filepath.Base(o.String())
	}
	return out
}

// WaitIdlePrompt waits until the pane shows the agent's prompt, at most
// the ready timeout, before a message turn. A question on the screen is
// handled like in a turn (needs_input); an error screen is waited out. If
// the agent is not at its prompt in time, the supervision ends done with
// the queue kept (Outcome.KeepQueue).
func (s *Supervisor) WaitIdlePrompt(ctx context.Context) error {
	return s.waitPrompt(ctx, false)
}

// WaitPromptAfterLimit is WaitIdlePrompt after a usage limit was waited
// out: the screen still shows the limit (or the CLI's error about it),
// which is the prompt to deliver to, not an error to wait out.
func (s *Supervisor) WaitPromptAfterLimit(ctx context.Context) error {
	return s.waitPrompt(ctx, true)
}

func (s *Supervisor) waitPrompt(ctx context.Context, afterLimit bool) error {
	idle := func(st profile.State) bool {
		return st == profile.StateReady || st == profile.StateLimited || (afterLimit && st == profile.StateError)
	}
	readyTimeout := s.readyTimeout()
	rctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		screen, err := s.TC.CaptureScreen(rctx, s.PaneID)
		if err != nil && rctx.Err() == nil {
			return err
		}
		if err == nil && idle(profile.Detect(s.Profile, screen).State) {
			// At its prompt (after a limit too: that is waited out
			// before this is called).
			return nil
		}
		var obs monitor.Observation
		if err == nil {
			obs, err = s.Mon.Wait(rctx, monitor.GoalReady, clock.Now())
		}
		switch {
		case err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return &Ended{Outcome{Status: state.StatusDone, KeepQueue: true,
				Reason: fmt.Sprintf("the agent was not at its prompt within %s; %d message(s) stay queued (the next 'runner msg' or 'runner send' retries)", readyTimeout, s.Book.Pending(ctx))}}
		case err != nil:
			return err
		case obs.Dead:
			return exited(obs, "the agent exited with status %d")
		case obs.Detection.State == profile.StateNeedsInput:
			if _, ok := s.limitDialog(obs.Screen); ok {
				// Another of the CLI's limit dialogs (Gemini asks once per
				// model): stopped too; the limit was waited out already.
				if err := s.stopLimitDialog(ctx, obs.Detection); err != nil {
					return err
				}
				continue
			}
			if err := s.needsInput(ctx, obs.Detection, obs); err != nil {
				return err
			}
		case idle(obs.Detection.State):
			return nil
		case obs.Detection.State != profile.StateReady:
			// An error screen: look again shortly rather than spin.
			select {
			case <-rctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

// agentPaths maps the paths a hook event names (AgentPath).
func (s *Supervisor) agentPaths(ev profile.HookEvent) profile.HookEvent {
	if s.AgentPath != nil {
		if ev.Transcript != "" {
			ev.Transcript = s.AgentPath(ev.Transcript)
		}
		if ev.AnswerFile != "" {
			ev.AnswerFile = s.AgentPath(ev.AnswerFile)
		}
	}
	return ev
}
