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
//
// Wait is the I/O half: it watches the files, takes hook events and looks
// at the pane; what each event means is the waitMachine's decision.
func (m *Monitor) Wait(ctx context.Context, goal Goal, since time.Time) (Observation, error) {
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
			if d := r.mach.debounced(time.Now()); d > 0 {
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
			if r.serverPID > 0 && !processAlive(r.serverPID) {
				return r.obs, fmt.Errorf("pane %s: %w (the tmux server stopped)", m.Pane, ErrPaneGone)
			}
			if r.panePID <= 0 || processAlive(r.panePID) {
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
		timer.Reset(max(time.Until(r.wake), time.Millisecond))
	}
}

// waitRun is one Wait's I/O state: the watcher, the files' offsets, the
// hook event that ended the turn (if one did), and the machine.
type waitRun struct {
	m         *Monitor
	goal      Goal
	start     time.Time
	w         *fsnotify.Watcher
	live      *liveness
	serverPID int
	panePID   int // the agent's process, once known
	eventsOff int64
	diedOff   int64
	match     profile.TurnMatch
	hookGoal  bool
	hookEnd   *profile.HookEvent
	mach      *waitMachine
	obs       Observation
	wake      time.Time // when the machine wants to look next
}

// newWaitRun sets a wait up: the defaults, the watcher on the transcript,
// events and pane-died files, liveness, and the turn-end events already
// written since the delivery (a quick turn ends while it is confirmed).
func (m *Monitor) newWaitRun(ctx context.Context, goal Goal, since time.Time) (*waitRun, error) {
	now := time.Now()
	settle, idle, safety := m.Settle, m.Idle, m.Safety
	if settle <= 0 {
		settle = DefaultSettle
	}
	if idle <= 0 {
		idle = DefaultIdle
	}
	if safety <= 0 {
		safety = DefaultSafety
	}
	hasMarkers := len(m.Profile.Ready) > 0 || len(m.Profile.Busy) > 0
	r := &waitRun{m: m, goal: goal, start: now, match: m.Match,
		hookGoal: goal == GoalTurnEnd || goal == GoalTurnStart,
		mach:     newWaitMachine(goal, settle, idle, safety, hasMarkers, m.Transcript != "", now)}
	if r.match.Since.IsZero() {
		r.match.Since = since
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", m.Pane, err)
	}
	r.w = w
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
				w.Close()
				return nil, fmt.Errorf("watch %s: %w", f, err)
			}
		}
	}
	r.serverPID, _ = m.TC.ServerPID(ctx)
	r.live = newLiveness(r.serverPID)
	r.eventsOff, r.diedOff = fileSize(m.Events), fileSize(m.Died)
	if r.hookGoal && m.Events != "" {
		from, untimedOK := r.match.EventsFrom, true
		if from < 0 || from > r.eventsOff {
			from, untimedOK = 0, false
		}
		lines, _ := readNewLines(m.Events, from)
		r.takeEvents(lines, untimedOK)
	}
	return r, nil
}

func (r *waitRun) close() {
	r.live.stop()
	r.w.Close()
}

// takeEvents looks for the turn-end event of the delivered turn among hook
// event lines: the agent said so, and that ends the wait at once.
// untimedOK admits events without a time (written during this wait).
func (r *waitRun) takeEvents(lines []string, untimedOK bool) {
	for _, l := range lines {
		ev, ok := profile.ParseHookEvent(l)
		if !ok || r.hookEnd != nil || !ev.Stop {
			continue // not a turn end (another hook event), or one came
		}
		why := ""
		if ev.Time.IsZero() && !untimedOK {
			why = "no time, and written before this wait (its turn cannot be told)"
		} else if ok, w := r.match.Accepts(ev); !ok {
			why = w
		}
		if why != "" {
			if r.m.Skipped != nil {
				r.m.Skipped(ev, why)
			}
			continue
		}
		e := ev
		r.hookEnd = &e
	}
}

// handle takes one watcher event: a transcript write, hook event lines,
// or a pane-died line.
func (r *waitRun) handle(ev fsnotify.Event) {
	m := r.m
	switch ev.Name {
	case m.Transcript:
		r.mach.written(time.Now())
	case m.Events:
		evs, off := readNewLines(m.Events, r.eventsOff)
		r.eventsOff = off
		if r.hookGoal {
			r.takeEvents(evs, true)
			if r.hookEnd != nil {
				r.mach.poke() // never "settled": the hook wins
			}
		}
	case m.Died:
		lines, off := readNewLines(m.Died, r.diedOff)
		r.diedOff = off
		for _, l := range lines {
			// "PANE STATUS" for a dead pane; "closed" when a window
			// went away (any task's: look at ours).
			if f := strings.Fields(l); len(f) >= 1 && (f[0] == m.Pane || f[0] == "closed") {
				r.mach.poke()
			}
		}
	}
}

// quiet takes the events already queued, then says whether nothing
// arrived since the last look: a write that raced with a look is never
// overlooked.
func (r *waitRun) quiet() bool {
	for {
		select {
		case ev := <-r.w.Events:
			r.handle(ev)
		default:
			return r.mach.quiet()
		}
	}
}

// step asks the machine what to do now and does it: look at the pane,
// finish, or set r.wake. end is true when the wait is over.
func (r *waitRun) step(ctx context.Context) (Observation, bool, error) {
	d := r.mach.tick(time.Now())
	if d.kind == captureNow {
		var obs Observation
		var end bool
		var err error
		if d, obs, end, err = r.look(ctx); end || err != nil {
			return obs, true, err
		}
	}
	return r.decide(d)
}

// look captures the pane beside the watcher: a hook event that arrives
// meanwhile ends the wait at once, without waiting for tmux (a capture
// takes tens of milliseconds under load); writes seen during it keep the
// machine dirty. A dead pane ends the wait; else the machine decides on
// what the screen shows.
func (r *waitRun) look(ctx context.Context) (decision, Observation, bool, error) {
	m := r.m
	lookStart := time.Now()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan captured, 1)
	go func() { done <- m.capture(cctx) }()
	var c captured
	for got := false; !got; {
		select {
		case c = <-done:
			got = true
		case ev, ok := <-r.w.Events:
			if !ok {
				return decision{}, r.obs, true, fmt.Errorf("watch %s: watcher closed", m.Pane)
			}
			r.handle(ev)
			if r.hookEnd != nil {
				return decision{}, hookObservation(r.hookEnd, r.start), true, nil
			}
		case <-ctx.Done():
			return decision{}, r.obs, true, ctx.Err()
		}
	}
	if err := c.err; err != nil {
		if ctx.Err() != nil {
			return decision{}, r.obs, true, ctx.Err()
		}
		if errors.Is(err, tmuxctl.ErrNotFound) {
			return decision{}, r.obs, true, fmt.Errorf("pane %s: %w (the window was closed or the tmux server stopped)", m.Pane, ErrPaneGone)
		}
		return decision{}, r.obs, true, err
	}
	info := c.info
	if r.panePID == 0 && !info.Dead {
		r.panePID = info.PID
		r.live.watchAgent(r.panePID)
	}
	now := time.Now()
	det := profile.DetectPane(m.Profile, c.screen, profile.PaneInfo{Dead: info.Dead, DeadStatus: info.DeadStatus,
		CurrentCommand: info.CurrentCommand, AlternateOn: info.AlternateOn, CursorKnown: true, CursorY: info.CursorY})
	r.obs = Observation{Detection: det, Screen: c.screen, Elapsed: time.Since(r.start), SawBusy: r.mach.sawBusy}
	if info.Dead {
		r.obs.Dead, r.obs.Status, r.obs.Via = true, info.DeadStatus, "pane"
		return decision{}, r.obs, true, nil
	}
	h := tmuxctl.ScreenHash(profile.MaskVolatile(m.Profile, c.screen), nil)
	d := r.mach.captured(lookStart, now, det.State, h)
	r.obs.SawBusy = r.mach.sawBusy
	return d, r.obs, false, nil
}

// decide carries a decision out: finish (if quiet), or sleep until its
// time.
func (r *waitRun) decide(d decision) (Observation, bool, error) {
	switch d.kind {
	case finish:
		return r.finish(d.via), true, nil
	case finishIfQuiet:
		if r.quiet() {
			return r.finish(d.via), true, nil
		}
		d = r.mach.next(time.Now())
	}
	r.wake = d.at
	return r.obs, false, nil
}

func (r *waitRun) finish(via string) Observation {
	r.obs.Via = via
	if via == "idle" {
		r.obs.Detection.State = profile.StateReady
	}
	return r.obs
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
