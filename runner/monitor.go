package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/profile"

	"github.com/fsnotify/fsnotify"
	"github.com/runner-cli/runner/tmuxctl"
)

// Monitor watches one agent pane and decides what the agent is doing, from
// the strongest signal to the weakest (DESIGN.md): the agent's own hook
// events, the pane's death, the profile's screen patterns (applied when the
// screen changed and held for Settle), and for profiles without patterns an
// unchanged screen for Idle.
//
// It is event driven: writes to the pane's transcript (pipe-pane), to the
// task's hook events file and to the pane-died file wake it up; a quiet pane
// costs no tmux calls but a slow safety check.
type Monitor struct {
	TC         *tmuxctl.Client
	Pane       string
	Profile    *profile.Profile
	Transcript string // the pane's pipe-pane file (activity)
	Events     string // the task's hook events file
	Died       string // the pane-died file written by tmux's hook
	Settle     time.Duration
	Idle       time.Duration
	// Safety is how often the pane is checked with no event at all (its
	// server may have died); zero means DefaultSafety.
	Safety time.Duration
	// Match says which hook event ends a GoalTurnEnd wait: the supervisor
	// sets it as it delivers. Zero: events stamped at or after the wait's
	// since, in any session, about any prompt.
	Match profile.TurnMatch
	// Skipped, when set, is told about each turn-end event that did not
	// end the wait, and why (the supervisor's log).
	Skipped func(ev profile.HookEvent, why string)
}

// DefaultSafety is how often a Monitor checks a pane with no event at all.
// Pane death and window closing arrive as tmux hook events, and the
// server's and the agent's exits through pidfds (see liveness); this tmux
// call only backs up those signals.
const DefaultSafety = 5 * time.Minute

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
		return st == profile.StateReady || st == profile.StateError || st == profile.StateNeedsInput
	case GoalTurnEnd:
		return st == profile.StateReady || st == profile.StateError || st == profile.StateNeedsInput
	case GoalLeaveInput:
		return st != profile.StateNeedsInput && st != profile.StateUnknown && st != profile.StateStarting
	case GoalTurnStart:
		return st == profile.StateBusy || st == profile.StateNeedsInput
	}
	return false
}

// Wait blocks until the pane reaches a state that ends goal, the pane dies
// (Observation.Dead, no error), or ctx ends (its error). since is when the
// phase started: hook events older than it are ignored. A missing pane or
// server is an error wrapping ErrPaneGone.
func (m *Monitor) Wait(ctx context.Context, goal Goal, since time.Time) (Observation, error) {
	start := time.Now()
	settle := m.Settle
	if settle <= 0 {
		settle = DefaultSettle
	}
	idle := m.Idle
	if idle <= 0 {
		idle = DefaultIdle
	}
	safety := m.Safety
	if safety <= 0 {
		safety = DefaultSafety
	}
	hasMarkers := len(m.Profile.Ready) > 0 || len(m.Profile.Busy) > 0
	serverPID, _ := m.TC.ServerPID(ctx)
	live := newLiveness(serverPID)
	defer live.stop()

	w, err := fsnotify.NewWatcher()
	if err != nil {
		return Observation{}, fmt.Errorf("watch %s: %w", m.Pane, err)
	}
	defer w.Close()
	// Watch the files themselves (all are only ever appended to), not
	// their directories: a write to another task's transcript must not
	// wake this supervisor. A file that cannot be watched falls back to
	// its directory.
	for _, f := range []string{m.Transcript, m.Events, m.Died} {
		if f == "" {
			continue
		}
		if err := w.Add(f); err != nil {
			if err := w.Add(filepath.Dir(f)); err != nil {
				return Observation{}, fmt.Errorf("watch %s: %w", f, err)
			}
		}
	}
	eventsOff := fileSize(m.Events)
	diedOff := fileSize(m.Died)
	match := m.Match
	if match.Since.IsZero() {
		match.Since = since
	}
	// A turn-end event of the delivered turn ends the wait at once: the
	// agent said so. Events written since the delivery, before this wait
	// began, count too (a quick turn ends while the delivery is confirmed).
	var hookEnd *profile.HookEvent
	takeEvents := func(lines []string, untimedOK bool) {
		for _, l := range lines {
			ev, ok := profile.ParseHookEvent(l)
			if !ok || hookEnd != nil {
				continue
			}
			if !ev.Stop {
				continue // not a turn end (another hook event)
			}
			why := ""
			if ev.Time.IsZero() && !untimedOK {
				why = "no time, and written before this wait (its turn cannot be told)"
			} else if ok, w := match.Accepts(ev); !ok {
				why = w
			}
			if why != "" {
				if m.Skipped != nil {
					m.Skipped(ev, why)
				}
				continue
			}
			e := ev
			hookEnd = &e
		}
	}
	hookGoal := goal == GoalTurnEnd || goal == GoalTurnStart
	if hookGoal && m.Events != "" {
		from, untimedOK := match.EventsFrom, true
		if from < 0 || from > eventsOff {
			from, untimedOK = 0, false
		}
		lines, _ := readNewLines(m.Events, from)
		takeEvents(lines, untimedOK)
		if hookEnd != nil {
			return hookObservation(hookEnd, start), nil
		}
	}

	var (
		candidate     profile.State
		candHash      string
		candSince     time.Time
		lastCapture   time.Time
		dirty         = true // capture at once
		lastSafety    = time.Now()
		lastHash      string
		lastHashSince = time.Now()
		obs           Observation
		lastWrite     time.Time // the last transcript write seen
		panePID       int       // the agent's process, once known
		sawBusy       bool      // a capture of this wait showed busy
	)
	handle := func(ev fsnotify.Event) {
		switch ev.Name {
		case m.Transcript:
			dirty = true
			lastWrite = time.Now()
		case m.Events:
			evs, off := readNewLines(m.Events, eventsOff)
			eventsOff = off
			if hookGoal {
				takeEvents(evs, true)
				if hookEnd != nil {
					dirty = true // never "settled": the hook wins
				}
			}
		case m.Died:
			lines, off := readNewLines(m.Died, diedOff)
			diedOff = off
			for _, l := range lines {
				// "PANE STATUS" for a dead pane; "closed" when a window
				// went away (any task's: look at ours).
				if f := strings.Fields(l); len(f) >= 1 && (f[0] == m.Pane || f[0] == "closed") {
					dirty = true
				}
			}
		}
	}
	// settled reports whether nothing arrived since the last look: events
	// already queued are handled first, so a write that raced with a
	// capture is never overlooked.
	settled := func() bool {
		for {
			select {
			case ev := <-w.Events:
				handle(ev)
			default:
				return !dirty
			}
		}
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return obs, ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return obs, fmt.Errorf("watch %s: watcher closed", m.Pane)
			}
			handle(ev)
			if hookEnd != nil {
				return hookObservation(hookEnd, start), nil
			}
			if !dirty {
				continue
			}
			// Debounce: let a burst of output land before capturing.
			if since := time.Since(lastCapture); since < 5*time.Millisecond {
				timer.Reset(5*time.Millisecond - since)
				continue
			}
		case <-w.Errors:
			continue
		case <-live.server:
			return obs, fmt.Errorf("pane %s: %w (the tmux server stopped)", m.Pane, ErrPaneGone)
		case <-live.agent:
			// The agent's process exited (tmux can be late to notice a
			// child's exit, and its pane-died hook with it): look.
			live.agentGone()
			dirty = true
		case <-live.tick:
			// No pidfd: free liveness checks every 2 s, no tmux call.
			if serverPID > 0 && !processAlive(serverPID) {
				return obs, fmt.Errorf("pane %s: %w (the tmux server stopped)", m.Pane, ErrPaneGone)
			}
			if panePID > 0 && !processAlive(panePID) {
				panePID = 0
				dirty = true
				break
			}
			continue
		case <-timer.C:
		}
		if hookEnd != nil {
			return hookObservation(hookEnd, start), nil
		}

		now := time.Now()
		// With a transcript, every screen change comes with a write, so a
		// candidate that saw no write for the settle time held: no capture
		// is needed to confirm it. Without one, confirm by capturing.
		confirmByCapture := m.Transcript == "" && candidate != "" && now.Sub(candSince) >= settle
		due := dirty || now.Sub(lastSafety) >= safety || confirmByCapture ||
			(!hasMarkers && now.Sub(lastHashSince) >= idle)
		if due {
			lastSafety = now
			captureStart := now
			// The capture runs beside the watcher: a hook event that
			// arrives meanwhile ends the wait at once, without waiting
			// for tmux (a capture takes tens of milliseconds under
			// load). Writes seen during the capture keep it dirty.
			dirty = false
			cctx, cancelCapture := context.WithCancel(ctx)
			done := make(chan captured, 1)
			go func() { done <- m.capture(cctx) }()
			var c captured
		waitCapture:
			for {
				select {
				case c = <-done:
					break waitCapture
				case ev, ok := <-w.Events:
					if !ok {
						cancelCapture()
						return obs, fmt.Errorf("watch %s: watcher closed", m.Pane)
					}
					handle(ev)
					if hookEnd != nil {
						cancelCapture()
						return hookObservation(hookEnd, start), nil
					}
				case <-ctx.Done():
					cancelCapture()
					return obs, ctx.Err()
				}
			}
			cancelCapture()
			info, screen, err := c.info, c.screen, c.err
			if err != nil {
				if ctx.Err() != nil {
					return obs, ctx.Err()
				}
				if errors.Is(err, tmuxctl.ErrNotFound) {
					return obs, fmt.Errorf("pane %s: %w (the window was closed or the tmux server stopped)", m.Pane, ErrPaneGone)
				}
				return obs, err
			}
			if panePID == 0 && !info.Dead {
				panePID = info.PID
				live.watchAgent(panePID)
			}
			lastCapture = time.Now()
			d := profile.DetectPane(m.Profile, screen, profile.PaneInfo{Dead: info.Dead, DeadStatus: info.DeadStatus,
				CurrentCommand: info.CurrentCommand, AlternateOn: info.AlternateOn, CursorKnown: true, CursorY: info.CursorY})
			obs = Observation{Detection: d, Screen: screen, Elapsed: time.Since(start), SawBusy: sawBusy}
			if info.Dead {
				obs.Dead, obs.Status, obs.Via = true, info.DeadStatus, "pane"
				return obs, nil
			}
			h := tmuxctl.ScreenHash(profile.MaskVolatile(m.Profile, screen), nil)
			if h != lastHash {
				lastHash, lastHashSince = h, lastCapture
			}
			st := d.State
			if st == profile.StateBusy {
				obs.SawBusy, sawBusy = true, true
				if goal == GoalTurnStart {
					obs.Via = "screen"
					return obs, nil
				}
			}
			obs.SawBusy = sawBusy
			if !hasMarkers && goal != GoalLeaveInput && goal != GoalTurnStart {
				// No patterns: an unchanged screen for idle is the end.
				if st != profile.StateNeedsInput && lastCapture.Sub(lastHashSince) >= idle {
					obs.Via = "idle"
					obs.Detection.State = profile.StateReady
					return obs, nil
				}
			}
			if goal.ends(st) {
				if st == candidate && h == candHash {
					if lastCapture.Sub(candSince) >= settle && settled() {
						obs.Via = "screen"
						return obs, nil
					}
				} else {
					// The screen has held since the last write before
					// this capture, not merely since the capture.
					candidate, candHash, candSince = st, h, lastCapture
					if m.Transcript != "" && !lastWrite.IsZero() && lastWrite.Before(captureStart) {
						candSince = lastWrite
					}
					if lastCapture.Sub(candSince) >= settle && settled() {
						obs.Via = "screen"
						return obs, nil
					}
				}
			} else {
				candidate = ""
			}
		} else if candidate != "" && now.Sub(candSince) >= settle && settled() {
			// Nothing was written since the candidate capture: the screen
			// cannot have changed, so it held for the settle time.
			obs.Via = "screen"
			return obs, nil
		}

		// Next wake-up: the settle deadline, the idle deadline, or the
		// safety check.
		next := lastSafety.Add(safety)
		if dirty {
			// Written while the capture ran (the watcher's events were
			// taken then): look again, after the debounce.
			next = time.Now().Add(5 * time.Millisecond)
		}
		if candidate != "" {
			next = minT(next, candSince.Add(settle))
		}
		if !hasMarkers {
			next = minT(next, lastHashSince.Add(idle))
		}
		timer.Reset(max(time.Until(next), time.Millisecond))
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
	lines, _ := readNewLines(m.Events, from)
	for _, l := range lines {
		ev, ok := profile.ParseHookEvent(l)
		if !ok || !ev.Stop || (ev.Time.IsZero() && !untimedOK) {
			continue
		}
		if ok, _ := m.Match.Accepts(ev); ok {
			return &ev
		}
	}
	return nil
}

// WaitHook waits up to d for the turn-end event that Match accepts in the
// events file (fsnotify, no polling) and returns it; nil when none came.
func (m *Monitor) WaitHook(ctx context.Context, d time.Duration) *profile.HookEvent {
	if m.Events == "" || d <= 0 {
		return nil
	}
	find := m.HookNow
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return find()
	}
	defer w.Close()
	if err := w.Add(m.Events); err != nil {
		_ = w.Add(filepath.Dir(m.Events)) // not written yet
	}
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

// hookObservation is a wait's end by the agent's turn-end hook event ev.
func hookObservation(ev *profile.HookEvent, start time.Time) Observation {
	return Observation{Detection: profile.Detection{State: profile.StateReady, Field: "hook"}, Via: "hook", Hook: ev, Elapsed: time.Since(start)}
}

// liveness tells a Monitor that the tmux server or the agent's process
// exited. With pidfds (Linux) nothing wakes up until one does; without,
// tick fires every 2 s for a kill(pid, 0) check.
type liveness struct {
	server, agent <-chan struct{}
	tick          <-chan time.Time
	stops         []func()
	ticker        *time.Ticker
}

func newLiveness(serverPID int) *liveness {
	l := &liveness{}
	if serverPID <= 0 {
		return l
	}
	if ch, stop, ok := exitNotify(serverPID); ok {
		l.server, l.stops = ch, append(l.stops, stop)
		return l
	}
	l.pollEvery()
	return l
}

// watchAgent starts watching the agent's process, once it is known.
func (l *liveness) watchAgent(pid int) {
	if ch, stop, ok := exitNotify(pid); ok {
		l.agent, l.stops = ch, append(l.stops, stop)
		return
	}
	l.pollEvery()
}

// agentGone stops reporting the agent's exit (reported once).
func (l *liveness) agentGone() { l.agent = nil }

func (l *liveness) pollEvery() {
	if l.ticker == nil {
		l.ticker = time.NewTicker(2 * time.Second)
		l.tick = l.ticker.C
	}
}

func (l *liveness) stop() {
	for _, f := range l.stops {
		f()
	}
	if l.ticker != nil {
		l.ticker.Stop()
	}
}

// captured is one look at the pane: its state and screen.
type captured struct {
	info   tmuxctl.PaneInfo
	screen string
	err    error
}

// capture looks at the pane once: its screen and state, with a dead
// pane's exit status where it can be known.
func (m *Monitor) capture(ctx context.Context) captured {
	info, screen, err := m.TC.PaneScreen(ctx, m.Pane)
	if err != nil && !errors.Is(err, tmuxctl.ErrNotFound) && ctx.Err() == nil {
		// A server that is going away can answer with nothing (exit 0,
		// no line): ask once more before giving up.
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
			info, screen, err = m.TC.PaneScreen(ctx, m.Pane)
		}
	}
	if err != nil {
		return captured{err: err}
	}
	if info.PID > 0 && (!info.Dead || info.DeadStatus < 0) {
		// tmux marks a pane dead only once it has reaped the process; a
		// tmux that lost the SIGCHLD keeps the agent a zombie, never
		// reaped, and the pane "alive" for ever.
		if st, known, zombie := zombieExit(info.PID); zombie && known {
			info.Dead, info.DeadStatus = true, st
		}
	}
	if info.Dead && info.DeadStatus < 0 {
		// Dead, status not known yet: ask tmux again (it waits briefly
		// for the status).
		if p, err := m.TC.Pane(ctx, m.Pane); err == nil {
			info.DeadStatus = p.DeadStatus
		}
	}
	return captured{info: info, screen: screen}
}

func minT(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func fileSize(p string) int64 {
	if p == "" {
		return 0
	}
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// readNewLines returns the complete lines appended to file after offset, and
// the new offset.
func readNewLines(file string, off int64) ([]string, int64) {
	f, err := os.Open(file)
	if err != nil {
		return nil, off
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < off {
		off = 0 // truncated
	}
	if _, err := f.Seek(off, 0); err != nil {
		return nil, off
	}
	var lines []string
	r := bufio.NewReader(f)
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			break
		}
		off += int64(len(l))
		lines = append(lines, strings.TrimRight(l, "\n"))
	}
	return lines, off
}
