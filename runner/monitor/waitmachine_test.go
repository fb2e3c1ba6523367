package monitor

import (
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/profile"
)

// t0 is the start of every table's wait.
var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// machineStep is one event of a table: a write, a poke, a tick, or a
// capture's result at a time (ms after t0).
type machineStep struct {
	at      int
	event   string        // "write", "poke", "tick", "capture"
	state   profile.State // capture
	hash    string        // capture
	startAt int           // capture: when the look began (ms)
}

func runMachine(w *waitMachine, steps []machineStep) decision {
	var d decision
	for _, s := range steps {
		now := t0.Add(ms(s.at))
		switch s.event {
		case "write":
			w.written(now)
		case "poke":
			w.poke()
		case "tick":
			d = w.tick(now)
		case "capture":
			d = w.captured(t0.Add(ms(s.startAt)), now, s.state, s.hash)
		}
	}
	return d
}

func TestWaitMachineTransitions(t *testing.T) {
	const settle, idle, safety = 50, 3000, 300000
	markers := func(goal Goal) *waitMachine {
		return newWaitMachine(goal, ms(settle), ms(idle), ms(safety), true, true, t0)
	}
	// quietFrom: this machine's transcript, written as the screen changes.
	quietFrom := func(w *waitMachine) *waitMachine {
		w.quietFrom = true
		return w
	}
	const hookSettle = 2000
	// hooked: the agent's hook wrote a line for the task (pi's prompt
	// hook as its turn begins).
	hooked := func(goal Goal) *waitMachine {
		w := markers(goal)
		w.hookSettle = ms(hookSettle)
		w.hookHeard()
		return w
	}
	cases := []struct {
		name  string
		mach  *waitMachine
		steps []machineStep
		want  decision
	}{
		{"a new wait looks at once", markers(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}}, decision{kind: captureNow}},
		{"busy does not end a turn: sleep until the safety check", markers(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateBusy, hash: "b"}},
			decision{kind: sleep, at: t0.Add(ms(safety))}},
		{"busy ends a turn-start wait at once", markers(GoalTurnStart),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateBusy, hash: "b"}},
			decision{kind: finish, via: "screen"}},
		{"ready does not end a turn-start wait", markers(GoalTurnStart),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r"}},
			decision{kind: sleep, at: t0.Add(ms(safety))}},
		{"a fresh ready screen waits for the settle time", markers(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r"}},
			decision{kind: sleep, at: t0.Add(ms(10 + settle))}},
		{"ready held with no write since: finish if quiet", markers(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r"}, {at: 10 + settle, event: "tick"}},
			decision{kind: finishIfQuiet, via: "screen"}},
		{"the last write long before the look: ready held already", markers(GoalTurnEnd),
			[]machineStep{{at: 0, event: "write"}, {at: 100, event: "tick"}, {at: 110, event: "capture", startAt: 100, state: profile.StateReady, hash: "r"}},
			decision{kind: finishIfQuiet, via: "screen"}},
		{"ready with no write since the wait began: held since then", quietFrom(markers(GoalReady)),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", startAt: 1, state: profile.StateReady, hash: "r"}, {at: settle, event: "tick"}},
			decision{kind: finishIfQuiet, via: "screen"}},
		{"ready with no write since the wait began, its settle not yet over: sleep until it is", quietFrom(markers(GoalReady)),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", startAt: 1, state: profile.StateReady, hash: "r"}},
			decision{kind: sleep, at: t0.Add(ms(settle))}},
		{"ready on a host's transcript (it lags): held only from the look", markers(GoalReady),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", startAt: 1, state: profile.StateReady, hash: "r"}, {at: settle, event: "tick"}},
			decision{kind: sleep, at: t0.Add(ms(10 + settle))}},
		{"a turn's end is not held from the wait's start", quietFrom(markers(GoalTurnEnd)),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", startAt: 1, state: profile.StateReady, hash: "r"}, {at: settle, event: "tick"}},
			decision{kind: sleep, at: t0.Add(ms(10 + settle))}},
		{"ready, a write during the look: look again", quietFrom(markers(GoalReady)),
			[]machineStep{{at: 0, event: "tick"}, {at: 5, event: "write"}, {at: 10, event: "capture", startAt: 1, state: profile.StateReady, hash: "r"}, {at: settle, event: "tick"}},
			decision{kind: captureNow}},
		{"a write after the candidate: look again", markers(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r"}, {at: 20, event: "write"}, {at: 30, event: "tick"}},
			decision{kind: captureNow}},
		{"a changed screen in the same state restarts the settle time", markers(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r1"}, {at: 20, event: "write"}, {at: 30, event: "tick"},
				{at: 40, event: "capture", startAt: 30, state: profile.StateReady, hash: "r2"}},
			decision{kind: sleep, at: t0.Add(ms(20 + settle))}},
		{"the same screen seen again after the settle time", markers(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r"}, {at: 20, event: "poke"}, {at: 70, event: "tick"},
				{at: 80, event: "capture", startAt: 70, state: profile.StateReady, hash: "r"}},
			decision{kind: finishIfQuiet, via: "screen"}},
		{"needs_input ends a turn", markers(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateNeedsInput, hash: "q"}, {at: 60, event: "tick"}},
			decision{kind: finishIfQuiet, via: "screen"}},
		{"needs_input does not end a leave-input wait", markers(GoalLeaveInput),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateNeedsInput, hash: "q"}},
			decision{kind: sleep, at: t0.Add(ms(safety))}},
		{"a dialog gone ends a leave-input wait once it holds", markers(GoalLeaveInput),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateBusy, hash: "b"}, {at: 60, event: "tick"}},
			decision{kind: finishIfQuiet, via: "screen"}},
		{"a candidate that turns busy is dropped", markers(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r"}, {at: 20, event: "poke"}, {at: 25, event: "tick"},
				{at: 30, event: "capture", startAt: 25, state: profile.StateBusy, hash: "b"}, {at: 100, event: "tick"}},
			decision{kind: sleep, at: t0.Add(ms(25 + safety))}},
		{"the safety check looks with no event", markers(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateBusy, hash: "b"}, {at: safety, event: "tick"}},
			decision{kind: captureNow}},
		{"no patterns: an unchanged screen for idle is done", newWaitMachine(GoalTurnEnd, ms(settle), ms(idle), ms(safety), false, true, t0),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateUnknown, hash: "s"}, {at: 10 + idle, event: "tick"},
				{at: 20 + idle, event: "capture", startAt: 10 + idle, state: profile.StateUnknown, hash: "s"}},
			decision{kind: finish, via: "idle"}},
		{"no patterns: a changing screen is not idle", newWaitMachine(GoalTurnEnd, ms(settle), ms(idle), ms(safety), false, true, t0),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateUnknown, hash: "s1"}, {at: 10 + idle, event: "tick"},
				{at: 20 + idle, event: "capture", startAt: 10 + idle, state: profile.StateUnknown, hash: "s2"}},
			decision{kind: sleep, at: t0.Add(ms(20 + 2*idle))}},
		{"hook heard: a ready screen that held for the settle time does not end the turn", hooked(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r"}, {at: 10 + settle, event: "tick"}},
			decision{kind: sleep, at: t0.Add(ms(10 + hookSettle))}},
		{"hook heard: an error screen waits for the hook too", hooked(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateError, hash: "e"}, {at: 100, event: "poke"}, {at: 100, event: "tick"},
				{at: 110, event: "capture", startAt: 100, state: profile.StateError, hash: "e"}},
			decision{kind: sleep, at: t0.Add(ms(10 + hookSettle))}},
		{"hook heard: a silent hook leaves the turn to a screen held for the hook settle time", hooked(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r"}, {at: 10 + hookSettle, event: "tick"}},
			decision{kind: finishIfQuiet, via: "screen"}},
		{"hook heard: a ready frame then busy: the busy screen drops it", hooked(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r"}, {at: 40, event: "write"}, {at: 45, event: "tick"},
				{at: 50, event: "capture", startAt: 45, state: profile.StateBusy, hash: "b"}, {at: 10 + hookSettle, event: "tick"}},
			decision{kind: sleep, at: t0.Add(ms(45 + safety))}},
		{"hook heard: a dialog still ends the turn after the short settle", hooked(GoalTurnEnd),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateNeedsInput, hash: "q"}, {at: 10 + settle, event: "tick"}},
			decision{kind: finishIfQuiet, via: "screen"}},
		{"hook heard: start-up waits keep the short settle", hooked(GoalReady),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r"}, {at: 10 + settle, event: "tick"}},
			decision{kind: finishIfQuiet, via: "screen"}},
		{"no transcript: a held candidate is confirmed by a look", newWaitMachine(GoalTurnEnd, ms(settle), ms(idle), ms(safety), true, false, t0),
			[]machineStep{{at: 0, event: "tick"}, {at: 10, event: "capture", state: profile.StateReady, hash: "r"}, {at: 10 + settle, event: "tick"}},
			decision{kind: captureNow}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := runMachine(c.mach, c.steps); got != c.want {
				t.Fatalf("decision %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestWaitMachineDebounceAndBusy(t *testing.T) {
	w := newWaitMachine(GoalTurnEnd, ms(50), ms(3000), ms(300000), true, true, t0)
	w.tick(t0)
	w.captured(t0, t0.Add(ms(10)), profile.StateBusy, "b")
	if !w.sawBusy {
		t.Fatal("a busy look is not remembered")
	}
	if d := w.debounced(t0.Add(ms(12))); d != ms(3) {
		t.Fatalf("a write 2 ms after a look waits %v, want 3ms", d)
	}
	if d := w.debounced(t0.Add(ms(20))); d != 0 {
		t.Fatalf("a write 10 ms after a look waits %v", d)
	}
	// Something that arrived while a finish was pending: look again soon.
	w.poke()
	if d := w.next(t0.Add(ms(30))); d.kind != sleep || d.at != t0.Add(ms(35)) {
		t.Fatalf("dirty next = %+v", d)
	}
}
