// The I/O half of Monitor.Wait: the watcher, hook events, liveness and
// looks at the pane, carrying out the waitMachine's decisions.

package monitor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/spend"
	"github.com/runner-cli/runner/tmuxctl"
)

// waitRun is one Wait's I/O state: the watcher, the files' offsets, the
// hook event that ended the turn (if one did), and the machine.
type waitRun struct {
	m         *Monitor
	goal      Goal
	start     time.Time
	w         *fileWatch
	live      *liveness
	serverPID int
	panePID   int       // the agent's process, once known
	events    *lineTail // the hook's events file, from the wait's start
	died      *lineTail // the pane-died file, likewise
	match     profile.TurnMatch
	hookGoal  bool
	hookEnd   *profile.HookEvent
	mach      *waitMachine
	leaves    int // how many times this wait pressed a view's leave keys
	obs       Observation
	wake      time.Time // when the machine wants to look next
}

// newWaitRun sets a wait up: the defaults, the watcher on the transcript,
// events and pane-died files, liveness, and the turn-end events already
// written since the delivery (a quick turn ends while it is confirmed).
func (m *Monitor) newWaitRun(ctx context.Context, goal Goal, since time.Time) (*waitRun, error) {
	now := clock.Now()
	settle, idle, safety := m.Settle, m.Idle, m.Safety
	if settle <= 0 {
		settle = DefaultSettle
	}
	if idle <= 0 {
		idle = DefaultIdle
	}
	if safety <= 0 {
		safety = DefaultSafety
		if m.Remote {
			safety = DefaultRemoteSafety
		}
	}
	hasMarkers := len(m.Profile.Ready) > 0 || len(m.Profile.Busy) > 0
	r := &waitRun{m: m, goal: goal, start: now, match: m.Match,
		hookGoal: goal == GoalTurnEnd || goal == GoalTurnStart,
		mach:     newWaitMachine(goal, settle, idle, safety, hasMarkers, m.Transcript != "", now)}
	if r.match.Since.IsZero() {
		r.match.Since = since
	}
	// The files themselves (all are only ever appended to), not their
	// directories: a write to another task's transcript must not wake
	// this supervisor.
	r.w = watchFiles(m.PollFirst, m.Transcript, m.Events, m.Died)
	if goal == GoalReady && !m.Remote && m.Transcript != "" && !r.w.Polling && FileSize(m.Transcript) == 0 {
		// A pane that has drawn nothing (its transcript, read once the
		// watch is on it, still empty: a launch pipes the pane in the
		// tmux call that makes it) shows nothing a look could find: the
		// first look waits for its first write, firstLookBy at the
		// latest. On a busy start (the snapshot beside it) that look
		// was a tmux client for nothing. Not where the files are polled
		// (no inotify left, as in a burst): a write is seen up to a
		// poll late there, and the look at once finds a prompt drawn
		// before its write reached the transcript.
		r.mach.dirty = false
		r.mach.lookBy(now.Add(firstLookBy))
	}
	if !m.Remote {
		r.serverPID, _ = m.TC.ServerPID(ctx)
	}
	r.live = newLiveness(r.serverPID)
	r.events, r.died = m.eventsTail(FileSize(m.Events)), &lineTail{file: m.Died, off: FileSize(m.Died), long: m.LongLine}
	if m.HookSettle > 0 {
		r.mach.hookSettle = m.HookSettle
	}
	// A host's transcript is a copy that lags its screen: only this
	// machine's is written as the screen changes.
	r.mach.quietFrom = !m.Remote
	if r.events.off > 0 {
		r.mach.hookHeard()
	}
	if r.hookGoal && m.Events != "" {
		from, untimedOK := r.match.EventsFrom, true
		if from < 0 || from > r.events.off {
			from, untimedOK = 0, false
		}
		m.eventsTail(from).read(func(l string) { r.takeEvent(l, untimedOK) })
	}
	return r, nil
}

func (r *waitRun) close() {
	r.live.stop()
	r.w.Close()
}

// takeEvent looks for the turn-end event of the delivered turn in a hook
// event line: the agent said so, and that ends the wait at once.
// untimedOK admits events without a time (written during this wait).
func (r *waitRun) takeEvent(l string, untimedOK bool) {
	ev, ok := spend.ReadHookEvent(l)
	if !ok || r.hookEnd != nil || !ev.Stop {
		return // not a turn end (another hook event), or one came
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
		return
	}
	r.hookEnd = &ev
}

// handle takes one watcher event: a transcript write, hook event lines,
// or a pane-died line.
func (r *waitRun) handle(ev fsnotify.Event) {
	m := r.m
	switch ev.Name {
	case m.Transcript:
		r.mach.written(clock.Now())
		if m.Wrote != nil {
			m.Wrote()
		}
	case m.Events:
		if m.HookWrote != nil {
			m.HookWrote()
		}
		heard := false
		r.events.read(func(l string) {
			heard = true
			if r.hookGoal {
				r.takeEvent(l, true)
			}
		})
		if heard {
			r.mach.hookHeard()
		}
		if r.hookGoal && r.hookEnd != nil {
			r.mach.poke() // never "settled": the hook wins
		}
	case m.Died:
		r.died.read(func(l string) {
			// "PANE STATUS" for a dead pane; "closed" when a window
			// went away (any task's: look at ours).
			if f := strings.Fields(l); len(f) >= 1 && (f[0] == m.Pane || f[0] == "closed") {
				r.mach.poke()
			}
		})
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
	d := r.mach.tick(clock.Now())
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
	lookStart := clock.Now()
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
	if r.panePID == 0 && !info.Dead && !m.Remote {
		r.panePID = info.PID
		r.live.watchAgent(r.panePID)
	}
	now := clock.Now()
	det := profile.DetectPane(m.Profile, c.screen, profile.PaneInfo{Dead: info.Dead, DeadStatus: info.DeadStatus,
		CurrentCommand: info.CurrentCommand, AlternateOn: info.AlternateOn, CursorKnown: true, CursorY: info.CursorY})
	r.obs = Observation{Detection: det, Screen: c.screen, Elapsed: clock.Since(r.start), SawBusy: r.mach.sawBusy}
	if info.Dead {
		if r.serverStopping() {
			return decision{}, r.obs, true, fmt.Errorf("pane %s: %w (the tmux server stopped)", m.Pane, ErrPaneGone)
		}
		r.obs.Dead, r.obs.Status, r.obs.Via = true, info.DeadStatus, "pane"
		return decision{}, r.obs, true, nil
	}
	if err := r.leave(ctx, det, now); err != nil {
		return decision{}, r.obs, true, err
	}
	h := tmuxctl.ScreenHash(profile.MaskVolatile(m.Profile, c.screen), nil)
	d := r.mach.captured(lookStart, now, det.State, h)
	r.obs.SawBusy = r.mach.sawBusy
	return d, r.obs, false, nil
}

// leave presses the keys that leave a view hiding the agent's state
// (Codex's transcript browsing, its view scrolled away from new output),
// at most maxLeaves times a wait, and has the machine look again soon:
// the screen behind it tells the state. A pane gone is an error.
func (r *waitRun) leave(ctx context.Context, det profile.Detection, now time.Time) error {
	if len(det.LeaveKeys) == 0 || r.leaves >= maxLeaves {
		return nil
	}
	r.leaves++
	if err := pressLeave(ctx, r.m.TC, r.m.Pane, det); err != nil {
		return err
	}
	r.mach.lookBy(now.Add(leaveRecheck))
	return nil
}

// serverStopping reports whether the tmux server exits within a short
// grace after its pane was seen dead: a server being killed kills its
// panes first, and the agent, a zombie tmux no longer reaps, looks like an
// agent that exited (the task then failed, its pane gone, not exited).
func (r *waitRun) serverStopping() bool {
	if r.serverPID <= 0 {
		return false
	}
	const grace = 150 * time.Millisecond
	if r.live.server != nil {
		select {
		case <-r.live.server:
			return true
		case <-time.After(grace):
			return false
		}
	}
	for end := clock.Now().Add(grace); clock.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if !proctree.Alive(r.serverPID) {
			return true
		}
	}
	return !proctree.Alive(r.serverPID)
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
		d = r.mach.next(clock.Now())
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
	if info.PID > 0 && (!info.Dead || info.DeadStatus < 0) && !m.Remote {
		// tmux marks a pane dead only once it has reaped the process; a
		// tmux that lost the SIGCHLD keeps the agent a zombie, never
		// reaped, and the pane "alive" for ever.
		if st, known, zombie := tmuxctl.ZombieExit(info.PID); zombie && known {
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
