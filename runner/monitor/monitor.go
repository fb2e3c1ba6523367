// Package monitor watches an agent's pane and tells what the agent is
// doing: Monitor.Wait ends on a turn-end hook event, the pane's death, or a
// screen that the profile's patterns say ends the goal (ready, a dialog, a
// turn begun) and that held for the settle time. The decisions are a
// state machine (waitMachine: events in, decision out, table-tested); the
// I/O around them (fsnotify on the transcript, the hook events and the
// pane-died file, pidfds for the tmux server and the agent, looks at the
// pane through the Panes interface) is waitRun. A quiet pane costs nothing
// but a safety look every few minutes.
package monitor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/spend"

	"github.com/runner-cli/runner/tmuxctl"
)

// Monitor watches one agent pane and decides what the agent is doing, from
// the strongest signal to the weakest (docs/architecture.md): the agent's own hook
// events, the pane's death, the profile's screen patterns (applied when the
// screen changed and held for Settle), and for profiles without patterns an
// unchanged screen for Idle.
//
// It is event driven: writes to the pane's transcript (pipe-pane), to the
// task's hook events file and to the pane-died file wake it up (told by
// inotify, or seen by looking at the files every millisecond during a
// foreground command's first PollFirst of each wait); a quiet pane costs
// no tmux calls but a slow safety check.
type Monitor struct {
	TC         Panes // the pane client: *tmuxctl.Client
	Pane       string
	Profile    *profile.Profile
	Transcript string // the pane's pipe-pane file (activity)
	Events     string // the task's hook events file
	Died       string // the pane-died file written by tmux's hook
	Settle     time.Duration
	// HookSettle is Settle for a screen that would end a turn once the
	// agent's hook wrote to Events (the hook works: its turn-end event
	// is the turn's end, the screen's word only when it stays silent);
	// zero means DefaultHookSettle.
	HookSettle time.Duration
	Idle       time.Duration
	// Safety is how often the pane is checked with no event at all (its
	// server may have died); zero means DefaultSafety, or
	// DefaultRemoteSafety for a Remote pane.
	Safety time.Duration
	// Remote says the pane is on another machine: its processes are not
	// this machine's (no pidfd on the server or the agent), and Transcript
	// and Died are local copies streamed from there.
	Remote bool
	// Match says which hook event ends a GoalTurnEnd wait: the supervisor
	// sets it as it delivers. Zero: events stamped at or after the wait's
	// since, in any session, about any prompt.
	Match profile.TurnMatch
	// Skipped, when set, is told about each turn-end event that did not
	// end the wait, and why (the supervisor's log).
	Skipped func(ev profile.HookEvent, why string)
	// Wrote, when set, is called (from the wait's goroutine: it must not
	// block) on each write to Transcript seen while a wait runs: what the
	// agent prints, for those who look at its files only then.
	Wrote func()
	// HookWrote, when set, is called likewise on each write to Events
	// (a hook's line: a turn's end, or usage so far).
	HookWrote func()
	// LongLine, when set, is told of each line of Events (or Died) over
	// MaxLine: skipped, the next line read (the supervisor's log).
	LongLine func(file string, off int64)
	// PollFirst, when set, is how long each watch of the files looks at
	// them itself (every fastPoll) before it takes an inotify instance:
	// for a foreground command, whose caller waits for its exit, and
	// whose exit waits for the kernel to tear down each inotify instance
	// it had (a grace period: 8-23 ms on the 2-core machine of
	// docs/benchmarks.md). Its short waits (a quick agent's start and
	// turn) take none; a longer one pays that once, at its end.
	PollFirst time.Duration
}

// ForegroundPoll is Monitor.PollFirst for a foreground command: a
// quarter second of looks at a few files' sizes costs far less than the
// wait it saves, and a wait longer than that makes the saving small.
const ForegroundPoll = 250 * time.Millisecond

// Panes is what a Monitor asks of the pane client (tmuxctl.Client
// satisfies it): the server's pid, a pane's state and screen, and keys
// pressed to leave a view that hides the agent's state.
type Panes interface {
	ServerPID(ctx context.Context) (int, error)
	PaneScreen(ctx context.Context, pane string) (tmuxctl.PaneInfo, string, error)
	Pane(ctx context.Context, pane string) (tmuxctl.PaneInfo, error)
	SendKeys(ctx context.Context, pane string, keys ...string) error
}

// maxLeaves is how many times one wait presses the keys that leave a view
// hiding the state (profile.Profile.Leave): a user attached to the pane
// who keeps going back to it is not fought for ever.
const maxLeaves = 3

// leaveRecheck is how soon after pressing them the wait looks again, when
// no redraw (a write to the transcript) came first.
const leaveRecheck = 300 * time.Millisecond

// DefaultIdle is how long a profile without markers must show no activity
// before its turn counts as ended (config idle).
const DefaultIdle = 3 * time.Second

// DefaultSettle is how long a ready marker must stay with no busy marker
// before the turn counts as ended (config settle, dispatch --settle).
const DefaultSettle = 50 * time.Millisecond

// DefaultHookSettle is how long an idle screen must hold, with no busy
// marker, before it ends a turn whose agent's hook was heard from (see
// Monitor.HookSettle): far longer than the ~0.2 s a hook can come after
// the screen's last frame, short enough for a hook that stays silent.
const DefaultHookSettle = 2 * time.Second

// DefaultSafety is how often a Monitor checks a pane with no event at all.
// Pane death and window closing arrive as tmux hook events, and the
// server's and the agent's exits through pidfds (see liveness); this tmux
// call only backs up those signals.
const DefaultSafety = 5 * time.Minute

// firstLookBy bounds how long a ready wait on a pane that has drawn
// nothing yet waits for its first write before it looks anyway (see
// newWaitRun): a backstop, since every frame an agent draws reaches its
// transcript.
const firstLookBy = 250 * time.Millisecond

// DefaultRemoteSafety is DefaultSafety for a pane on another machine,
// whose server's death no pidfd reports: one tmux call over the host's
// shared connection this often.
const DefaultRemoteSafety = 30 * time.Second

// Observation is what a Monitor wait ended on.
type Observation struct {
	Detection profile.Detection
	Screen    string
	Via       string // "screen", "hook", "idle", "pane"
	// Hook is the agent's turn-end event that ended the wait (Via "hook").
	Hook    *profile.HookEvent
	Dead    bool
	Status  int // exit status when Dead
	Elapsed time.Duration
	// SawBusy reports that a capture during the wait showed the agent busy
	// (a sign that a turn began, even where the wait ended on ready).
	SawBusy bool
}

// ErrPaneGone is wrapped when the agent's pane (or its tmux server)
// disappeared.
var ErrPaneGone = errors.New("the agent's pane is gone")

// Goal says which states end a wait.
type Goal int

const (
	// GoalReady waits for the agent to show its prompt (startup): ends on
	// ready, needs_input (a trust or first-run dialog), or death.
	GoalReady Goal = iota
	// GoalTurnEnd waits for the end of a turn: ends on ready or error
	// (done), needs_input, or death.
	GoalTurnEnd
	// GoalLeaveInput waits until a needs_input dialog is gone (answered).
	GoalLeaveInput
	// GoalTurnStart waits for a sign that a delivered prompt began a turn:
	// ends on the first busy screen (not settled: a busy screen keeps
	// changing), a turn-end hook event since the wait began, needs_input,
	// or death. Ready and starting screens do not end it.
	GoalTurnStart
)

func (g Goal) ends(st profile.State) bool {
	switch g {
	case GoalReady:
		return st.Idle() || st == profile.StateNeedsInput
	case GoalTurnEnd:
		return st.Idle() || st == profile.StateNeedsInput || st == profile.StateLimitWait
	case GoalLeaveInput:
		return st != profile.StateNeedsInput && st != profile.StateUnknown && st != profile.StateStarting
	case GoalTurnStart:
		return st.Working() || st == profile.StateNeedsInput
	}
	return false
}

// Wait blocks until the pane reaches a state that ends goal, the pane dies
// (Observation.Dead, no error), or ctx ends (its error). since is when the
// phase started: hook events older than it are ignored. A missing pane or
// server is an error wrapping ErrPaneGone.
//
// Wait is the I/O half: it watches the files, takes hook events and looks
// at the pane; what each event means is the waitMachine's decision.
func (m *Monitor) Wait(ctx context.Context, goal Goal, since time.Time) (Observation, error) {
	if (goal == GoalTurnEnd || goal == GoalTurnStart) && !m.Match.Since.IsZero() {
		// The turn ended while its delivery was confirmed: its hook's
		// line is there already; no watcher, no tmux call.
		if ev := m.HookNow(); ev != nil {
			return hookObservation(ev, clock.Now()), nil
		}
	}
	r, err := m.newWaitRun(ctx, goal, since)
	if err != nil {
		return Observation{}, err
	}
	defer r.close()
	if r.hookEnd != nil {
		return hookObservation(r.hookEnd, r.start), nil
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return r.obs, ctx.Err()
		case ev, ok := <-r.w.Events:
			if !ok {
				return r.obs, fmt.Errorf("watch %s: watcher closed", m.Pane)
			}
			r.handle(ev)
			if r.hookEnd != nil {
				return hookObservation(r.hookEnd, r.start), nil
			}
			if r.mach.quiet() {
				continue
			}
			if d := r.mach.debounced(clock.Now()); d > 0 {
				timer.Reset(d)
				continue
			}
		case <-r.w.Errors:
			continue
		case <-r.live.server:
			return r.obs, fmt.Errorf("pane %s: %w (the tmux server stopped)", m.Pane, ErrPaneGone)
		case <-r.live.agent:
			// The agent's process exited (tmux can be late to notice a
			// child's exit, and its pane-died hook with it): look.
			r.live.agentGone()
			r.mach.poke()
		case <-r.live.tick:
			// No pidfd: free liveness checks every 2 s, no tmux call.
			if r.serverPID > 0 && !proctree.Alive(r.serverPID) {
				return r.obs, fmt.Errorf("pane %s: %w (the tmux server stopped)", m.Pane, ErrPaneGone)
			}
			if r.panePID <= 0 || proctree.Alive(r.panePID) {
				continue
			}
			r.panePID = 0
			r.mach.poke()
		case <-timer.C:
		}
		if r.hookEnd != nil {
			return hookObservation(r.hookEnd, r.start), nil
		}
		obs, end, err := r.step(ctx)
		if end || err != nil {
			return obs, err
		}
		timer.Reset(max(clock.Until(r.wake), time.Millisecond))
	}
}

// HookNow returns the turn-end event that Match accepts if the events file
// has it already, else nil.
func (m *Monitor) HookNow() *profile.HookEvent {
	if m.Events == "" {
		return nil
	}
	from, untimedOK := m.Match.EventsFrom, true
	if from < 0 {
		from, untimedOK = 0, false
	}
	var found *profile.HookEvent
	m.eventsTail(from).read(func(l string) {
		ev, ok := spend.ReadHookEvent(l)
		if found != nil || !ok || !ev.Stop || (ev.Time.IsZero() && !untimedOK) {
			return
		}
		if ok, _ := m.Match.Accepts(ev); ok {
			found = &ev
		}
	})
	return found
}

// eventsTail reads the events file's lines from off on.
func (m *Monitor) eventsTail(off int64) *lineTail {
	return &lineTail{file: m.Events, off: off, long: m.LongLine}
}

// WaitHook waits up to d for the turn-end event that Match accepts in the
// events file (fsnotify, no polling, but for a fileWatch out of inotify
// instances) and returns it; nil when none came.
func (m *Monitor) WaitHook(ctx context.Context, d time.Duration) *profile.HookEvent {
	if m.Events == "" || d <= 0 {
		return nil
	}
	find := m.HookNow
	w := watchFiles(m.PollFirst, m.Events)
	defer w.Close()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		if ev := find(); ev != nil {
			return ev
		}
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
			return find()
		case <-w.Events:
		case <-w.Errors:
		}
	}
}

// Written returns a channel that receives when the task's hook events
// file or the pane's transcript is written, until stop is called (nil
// without either file): what a delivery waits on beside its looks at the
// screen, so that the agent's first sign of taking the text (its busy
// line), or a quick turn's end, is seen as it is written rather than at
// the next poll.
func (m *Monitor) Written() (written <-chan struct{}, stop func()) {
	if m.Events == "" && m.Transcript == "" {
		return nil, func() {}
	}
	w := watchFiles(m.PollFirst, m.Events, m.Transcript)
	ch := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-w.Events:
				select {
				case ch <- struct{}{}:
				default:
				}
			case <-w.Errors:
			}
		}
	}()
	return ch, func() {
		close(done)
		w.Close()
	}
}

// hookObservation is a wait's end by the agent's turn-end hook event ev.
func hookObservation(ev *profile.HookEvent, start time.Time) Observation {
	return Observation{Detection: profile.Detection{State: profile.StateReady, Field: "hook"}, Via: "hook", Hook: ev, Elapsed: clock.Since(start)}
}

func minT(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// FileSize returns the size of p (0 when it cannot be read): the offset
// from which lines appended later are read.
func FileSize(p string) int64 {
	if p == "" {
		return 0
	}
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}
