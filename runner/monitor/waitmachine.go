package monitor

import (
	"time"

	"github.com/runner-cli/runner/runner/profile"
)

// waitMachine is the decision part of Monitor.Wait: events in (a write to
// the transcript, a wake-up, a capture's result), a decision out (capture
// now, finish, finish if nothing arrived meanwhile, or sleep until a
// time). It does no I/O and reads no clock: every event carries its time,
// so each transition is table-tested (waitmachine_test.go). Hook events and
// the pane's death are decided before it is asked (they always win).
type waitMachine struct {
	goal       Goal
	settle     time.Duration // how long a screen that ends the goal must hold
	idle       time.Duration // no patterns: how long an unchanged screen means done
	safety     time.Duration // how often to look with no event at all
	hasMarkers bool          // the profile has ready or busy patterns
	transcript bool          // screen changes come with transcript writes
	// hookSettle replaces settle for an idle screen that would end a
	// turn once the agent's turn-end hook was heard from (hooked): the
	// hook's own word ends the turn, the screen only when it is silent.
	hookSettle time.Duration
	hooked     bool
	// quietFrom: with no transcript write since the wait began (began), a
	// ready screen has held since then, not merely since the look that
	// found it (GoalReady on this machine's transcript: an agent that drew
	// its prompt before the wait began, as one that starts in a few
	// milliseconds does beside its snapshot). A write still on its way
	// arrives during or after that look, and makes the wait look again.
	quietFrom bool
	began     time.Time

	dirty       bool      // something happened since the last look
	lastWrite   time.Time // the last transcript write
	lastCapture time.Time
	lastSafety  time.Time // the last look of any kind
	lastHash    string    // the last screen's hash, and since when it holds
	hashSince   time.Time
	candidate   profile.State // a state that ends the goal, waiting to hold
	candHash    string
	candSince   time.Time
	sawBusy     bool      // a look of this wait showed the agent busy
	recheck     time.Time // look again by then (keys were pressed); zero: none
}

// decisionKind says what the wait does next.
type decisionKind int

const (
	// sleep until decision.at (or the next event).
	sleep decisionKind = iota
	// captureNow: look at the pane (then call captured).
	captureNow
	// finish: the wait ends, via decision.via.
	finish
	// finishIfQuiet: the wait ends unless an event is already queued
	// (take the queued events, then ask quiet()).
	finishIfQuiet
)

// decision is a waitMachine's answer.
type decision struct {
	kind decisionKind
	at   time.Time // sleep: until when
	via  string    // finish: "screen" or "idle"
}

// newWaitMachine starts a wait at now: dirty, so the first decision is a
// look.
func newWaitMachine(goal Goal, settle, idle, safety time.Duration, hasMarkers, transcript bool, now time.Time) *waitMachine {
	return &waitMachine{goal: goal, settle: settle, idle: idle, safety: safety, hasMarkers: hasMarkers,
		transcript: transcript, dirty: true, lastSafety: now, hashSince: now, hookSettle: DefaultHookSettle, began: now}
}

// written records a transcript write at now.
func (w *waitMachine) written(now time.Time) {
	w.dirty = true
	w.lastWrite = now
}

// poke records a change worth a look (the pane died, the agent exited, a
// hook line that ends nothing).
func (w *waitMachine) poke() { w.dirty = true }

// hookHeard records that the agent's hook wrote a line for the task (a
// prompt's start, a turn's end or spend): the hook works, so its turn-end
// event ends the turn, and an idle screen must hold for hookSettle before
// it does instead. pi 0.73.1 under Node 22 draws its idle footer, the
// prompt already out of its editor and no "Working..." line, for tens of
// milliseconds after its prompt hook ran, and its Stop hook runs ~0.1 s
// after such a frame.
func (w *waitMachine) hookHeard() { w.hooked = true }

// settleFor is how long a candidate in state st must hold.
func (w *waitMachine) settleFor(st profile.State) time.Duration {
	if w.hooked && w.goal == GoalTurnEnd && st.Idle() && w.hookSettle > w.settle {
		return w.hookSettle
	}
	return w.settle
}

// lookBy asks for a look by t at the latest (keys pressed to leave a view:
// the screen behind it is due soon, even if its redraw is missed).
func (w *waitMachine) lookBy(t time.Time) { w.recheck = t }

// quiet reports whether nothing arrived since the last look.
func (w *waitMachine) quiet() bool { return !w.dirty }

// tick decides at now, after an event or a timer: look, finish on a
// candidate that held with no write, or sleep.
func (w *waitMachine) tick(now time.Time) decision {
	// With a transcript, every screen change comes with a write, so a
	// candidate that saw no write for the settle time held: no look is
	// needed to confirm it. Without one, confirm by looking.
	held := w.candidate != "" && now.Sub(w.candSince) >= w.settleFor(w.candidate)
	rechecked := !w.recheck.IsZero() && !now.Before(w.recheck)
	due := w.dirty || rechecked || now.Sub(w.lastSafety) >= w.safety || (!w.transcript && held) ||
		(!w.hasMarkers && now.Sub(w.hashSince) >= w.idle)
	if due {
		w.lastSafety = now
		w.dirty, w.recheck = false, time.Time{}
		return decision{kind: captureNow}
	}
	if held {
		return decision{kind: finishIfQuiet, via: "screen"}
	}
	return w.next(now)
}

// captured takes a look's result: the state detected on the screen and the
// screen's hash, looked at from start until now.
func (w *waitMachine) captured(start, now time.Time, st profile.State, hash string) decision {
	w.lastCapture = now
	if hash != w.lastHash {
		w.lastHash, w.hashSince = hash, now
	}
	if st == profile.StateLimitWait && w.goal == GoalTurnEnd {
		// The CLI waits out a limit by itself (a countdown: the screen
		// never settles): at once.
		w.sawBusy = true
		return decision{kind: finish, via: "screen"}
	}
	if st.Working() {
		w.sawBusy = true
		if w.goal == GoalTurnStart {
			return decision{kind: finish, via: "screen"}
		}
	}
	if !w.hasMarkers && w.goal != GoalLeaveInput && w.goal != GoalTurnStart &&
		st != profile.StateNeedsInput && now.Sub(w.hashSince) >= w.idle {
		// No patterns: an unchanged screen for idle is the end.
		return decision{kind: finish, via: "idle"}
	}
	if !w.goal.ends(st) {
		w.candidate = ""
		return w.next(now)
	}
	if st != w.candidate || hash != w.candHash {
		// A new candidate. The screen has held since the last write
		// before this look, not merely since the look.
		w.candidate, w.candHash, w.candSince = st, hash, now
		switch {
		case !w.transcript:
		case !w.lastWrite.IsZero() && w.lastWrite.Before(start):
			w.candSince = w.lastWrite
		case w.lastWrite.IsZero() && w.quietFrom && w.goal == GoalReady:
			w.candSince = w.began
		}
	}
	if now.Sub(w.candSince) >= w.settleFor(st) {
		return decision{kind: finishIfQuiet, via: "screen"}
	}
	return w.next(now)
}

// next is when to look again with no event: the safety check, the settle
// deadline of a candidate, the idle deadline without patterns, or at once
// (after a 5 ms debounce) when something arrived during the look.
func (w *waitMachine) next(now time.Time) decision {
	at := w.lastSafety.Add(w.safety)
	if w.dirty {
		at = now.Add(5 * time.Millisecond)
	}
	if w.candidate != "" {
		at = minT(at, w.candSince.Add(w.settleFor(w.candidate)))
	}
	if !w.recheck.IsZero() {
		at = minT(at, w.recheck)
	}
	if !w.hasMarkers {
		at = minT(at, w.hashSince.Add(w.idle))
	}
	return decision{kind: sleep, at: at}
}

// debounce is how long after a look a write waits before the next one: a
// burst of output lands first.
const debounce = 5 * time.Millisecond

// debounced reports how long to wait before looking after a write at now
// (zero: look now).
func (w *waitMachine) debounced(now time.Time) time.Duration {
	if since := now.Sub(w.lastCapture); since < debounce {
		return debounce - since
	}
	return 0
}
