package monitor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/tmuxctl"
)

// busyForever shows the sim's busy line for ever.
const busyForever = `printf '> task\n✻ Working… (esc to interrupt)\n'; exec sleep 600`

// monitorPane starts a pane running script on a private tmux server, and a
// Monitor (sim profile) on it with an events file.
func monitorPane(t *testing.T, script string) (*Monitor, *tmuxctl.Client) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	dir := t.TempDir()
	tc := tmuxctl.New(filepath.Join(dir, "tmux.sock"))
	t.Cleanup(func() { _ = tc.KillServer(context.Background()) })
	transcript := filepath.Join(dir, "transcript")
	events := filepath.Join(dir, "events.jsonl")
	for _, f := range []string{transcript, events} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pane, err := tc.Launch(t.Context(), tmuxctl.WindowSpec{Session: "m", Name: "w", Size: tmuxctl.Size{Width: 80, Height: 20},
		Argv: []string{"sh", "-c", script}, PipeTo: transcript})
	if err != nil {
		t.Fatal(err)
	}
	sim, _ := profile.BuiltinProfile("sim")
	return &Monitor{TC: tc, Pane: pane, Profile: sim, Transcript: transcript, Events: events, Settle: 25 * time.Millisecond}, tc
}

func appendLine(t *testing.T, file, line string) time.Time {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := clock.Now()
	if _, err := f.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
	return at
}

// TestMonitorHookDecisions drives a Monitor on a pane that stays busy (the
// screen never ends the turn) with events written to its events file: a
// stale Stop, a sub-agent's stop, a side turn's and another session's do
// not end the turn; this turn's Stop ends it at once, with its answer and
// session.
func TestMonitorHookDecisions(t *testing.T) {
	m, _ := monitorPane(t, busyForever)
	stale := fmt.Sprintf(`{"time":%q,"event":"Stop","data":{"session_id":"s1","last_assistant_message":"old answer"}}`,
		clock.Now().Add(-time.Minute).Format(time.RFC3339Nano))
	appendLine(t, m.Events, stale)
	// An untimed payload already in the file when a supervisor that did
	// not deliver starts: its turn cannot be told, so it is not taken.
	appendLine(t, m.Events, `{"hook_event_name":"Stop","session_id":"s1","last_assistant_message":"untimed old"}`)
	since := clock.Now()
	m.Match = profile.TurnMatch{Since: since, EventsFrom: -1, Signature: "task", Session: "s1"}
	var skipped []string
	m.Skipped = func(ev profile.HookEvent, why string) { skipped = append(skipped, why) }

	quiet := func(what string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 400*time.Millisecond)
		defer cancel()
		obs, err := m.Wait(ctx, GoalTurnEnd, since)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s ended the turn: %+v, %v", what, obs, err)
		}
	}
	quiet("a stale Stop")
	// Written during the wait: a sub-agent's stop, a side turn, another
	// session.
	go func() {
		time.Sleep(50 * time.Millisecond)
		appendLine(t, m.Events, `{"hook_event_name":"SubagentStop","session_id":"s1","agent_id":"a","last_assistant_message":"sub"}`)
		appendLine(t, m.Events, `{"type":"agent-turn-complete","thread-id":"s1","input-messages":["Generate a title"],"last-assistant-message":"Title"}`)
		appendLine(t, m.Events, `{"hook_event_name":"Stop","session_id":"s9","last_assistant_message":"other session"}`)
	}()
	quiet("a sub-agent's, a side turn's or another session's stop")
	if len(skipped) < 4 {
		t.Errorf("skipped events: %q, want the stale, untimed, side-turn and other-session ones", skipped)
	}

	// This turn's Stop, written after the delivery (the offset the
	// supervisor notes as it delivers): the wait ends on it, whether it
	// began before or after the write, and reports how soon.
	m.Match.EventsFrom = FileSize(m.Events)
	type result struct {
		obs  Observation
		err  error
		done time.Time
	}
	res := make(chan result, 1)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	go func() {
		obs, err := m.Wait(ctx, GoalTurnEnd, since)
		res <- result{obs, err, clock.Now()}
	}()
	time.Sleep(100 * time.Millisecond)
	wrote := appendLine(t, m.Events, `{"hook_event_name":"Stop","session_id":"s1","last_assistant_message":"the answer\nline two"}`)
	r := <-res
	if r.err != nil || r.obs.Via != "hook" || r.obs.Hook == nil || r.obs.Hook.Answer != "the answer\nline two" || r.obs.Hook.Session != "s1" {
		t.Fatalf("wait ended with %+v, %v; want this turn's hook", r.obs, r.err)
	}
	t.Logf("event write → wait ended: %s", r.done.Sub(wrote))
}

// TestMonitorHookNeverComes: without a hook event the screen still ends
// the turn (the guard): busy, then the ready box.
func TestMonitorHookNeverComes(t *testing.T) { screenEndsTurn(t) }

// screenEndsTurn: with no hook event, the ready screen ends the turn,
// with its answer.
func screenEndsTurn(t *testing.T) {
	t.Helper()
	m, _ := monitorPane(t, `printf '> task\n✻ Working… (esc to interrupt)\n'; sleep 0.3; printf '\033[2J\033[H> task\nthe answer\n\n╭───╮\n│ > │\n╰───╯\n'; exec sleep 600`)
	since := clock.Now()
	m.Match = profile.TurnMatch{Since: since, EventsFrom: 0}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	obs, err := m.Wait(ctx, GoalTurnEnd, since)
	if err != nil || obs.Via != "screen" || obs.Detection.State != profile.StateReady {
		t.Fatalf("wait ended with %+v, %v; want the ready screen", obs, err)
	}
	if got := profile.ScreenAnswer(m.Profile, obs.Screen); got != "the answer" {
		t.Errorf("screen answer %q", got)
	}
}

// TestMonitorHookHeardScreenWaits: once the agent's hook wrote a line for
// the task (pi's prompt hook as its turn begins), an idle screen that
// holds for the short settle does not end the turn: pi 0.73.1 under
// Node 22 draws its footer with no busy line right after taking the
// prompt, and its Stop comes ~0.1 s later. The Stop ends the turn, with
// its answer; with none, the screen still does after HookSettle.
func TestMonitorHookHeardScreenWaits(t *testing.T) {
	ready := `printf '> task\n\n╭───╮\n│ > │\n╰───╯\n'; exec sleep 600`
	m, _ := monitorPane(t, ready)
	m.HookSettle = 700 * time.Millisecond
	since := clock.Now()
	appendLine(t, m.Events, `{"time":"`+since.Format(time.RFC3339Nano)+`","hook_event_name":"UserPromptSubmit","session_id":"s1"}`)
	m.Match = profile.TurnMatch{Since: since, EventsFrom: FileSize(m.Events)}
	go func() {
		time.Sleep(300 * time.Millisecond)
		appendLine(t, m.Events, `{"hook_event_name":"Stop","session_id":"s1","last_assistant_message":"the hook's answer"}`)
	}()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	obs, err := m.Wait(ctx, GoalTurnEnd, since)
	if err != nil || obs.Via != "hook" || obs.Hook == nil || obs.Hook.Answer != "the hook's answer" {
		t.Fatalf("wait ended with %+v, %v; want the Stop that came 0.3 s after the idle screen", obs, err)
	}
	// The hook silent: the idle screen ends the turn, after HookSettle.
	m.Match = profile.TurnMatch{Since: clock.Now(), EventsFrom: FileSize(m.Events)}
	start := clock.Now()
	obs, err = m.Wait(ctx, GoalTurnEnd, start)
	if err != nil || obs.Via != "screen" || obs.Detection.State != profile.StateReady {
		t.Fatalf("wait ended with %+v, %v; want the ready screen", obs, err)
	}
	if took := clock.Since(start); took < m.HookSettle {
		t.Errorf("the screen ended the turn after %s, before HookSettle %s", took, m.HookSettle)
	}
}

// TestWaitHook: after the screen shows a turn's end, the supervisor of a
// CLI whose hook fires late waits for it: an accepted event written
// during the grace is returned at once (inotify), a stale one from before
// the delivery is not, and with none the grace runs out.
func TestWaitHook(t *testing.T) {
	events := filepath.Join(t.TempDir(), "ev.jsonl")
	since := clock.Now()
	stale := `{"time":"` + since.Add(-time.Minute).Format(time.RFC3339Nano) + `","event":"Stop","data":{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"old"}}`
	if err := os.WriteFile(events, []byte(stale+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := &Monitor{Events: events, Match: profile.TurnMatch{Since: since, EventsFrom: -1}}
	if ev := m.WaitHook(t.Context(), 200*time.Millisecond); ev != nil {
		t.Fatalf("stale event taken: %+v", ev)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		f, _ := os.OpenFile(events, os.O_APPEND|os.O_WRONLY, 0)
		fmt.Fprintf(f, `{"time":"%s","event":"Stop","data":{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"new"}}`+"\n", clock.Now().Format(time.RFC3339Nano))
		f.Close()
	}()
	ev := m.WaitHook(t.Context(), 30*time.Second)
	if ev == nil || ev.Answer != "new" {
		t.Fatalf("WaitHook = %+v, want the new event", ev)
	}
}

// Without inotify (this user's instances all taken by other supervisors),
// a wait still ends: on the screen, and on the hook event, by looking at
// the files' sizes.
func TestMonitorWithoutInotify(t *testing.T) {
	noInotify = true
	t.Cleanup(func() { noInotify = false })
	if w := watchFiles(0, filepath.Join(t.TempDir(), "x")); !w.Polling {
		t.Fatal("watchFiles did not fall back to polling")
	} else {
		w.Close()
	}
	screenEndsTurn(t)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	m2, _ := monitorPane(t, busyForever)
	since := clock.Now()
	m2.Match = profile.TurnMatch{Since: since, EventsFrom: 0}
	go func() {
		time.Sleep(300 * time.Millisecond)
		appendLine(t, m2.Events, `{"time":"`+clock.Now().Format(time.RFC3339Nano)+`","event":"Stop","data":{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"done"}}`)
	}()
	obs, err := m2.Wait(ctx, GoalTurnEnd, since)
	if err != nil || obs.Via != "hook" || obs.Hook == nil || obs.Hook.Answer != "done" {
		t.Fatalf("wait ended with %+v, %v; want the hook's event", obs, err)
	}
}
