package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/tmuxctl"
)

// TestParseHookEvent reads each CLI's turn-end payload, appended as is or
// wrapped by `runner hook`.
func TestParseHookEvent(t *testing.T) {
	for _, c := range []struct {
		name, line             string
		stop                   bool
		session, answer, name2 string
		prompts                int
	}{
		{"claude Stop", `{"session_id":"s1","transcript_path":"/x","cwd":"/p","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"I ran it.\nDone."}`,
			true, "s1", "I ran it.\nDone.", "Stop", 0},
		{"claude SubagentStop", `{"session_id":"s1","hook_event_name":"SubagentStop","agent_id":"a1","last_assistant_message":"sub"}`,
			false, "s1", "sub", "SubagentStop", 0},
		{"codex notify", `{"type":"agent-turn-complete","thread-id":"th","turn-id":"1","input-messages":["fix it"],"last-assistant-message":"fixed"}`,
			true, "th", "fixed", "agent-turn-complete", 1},
		{"gemini AfterAgent", `{"session_id":"g","hook_event_name":"AfterAgent","prompt":"hi","prompt_response":"hello"}`,
			true, "g", "hello", "AfterAgent", 1},
		{"opencode plugin, child session", `{"hook_event_name":"SubagentStop","session_id":"c","parent_id":"p","last_assistant_message":"x"}`,
			false, "c", "x", "SubagentStop", 0},
		{"runner hook record", `{"time":"2026-01-02T03:04:05Z","event":"Stop","data":{"hook_event_name":"Stop","session_id":"sim","last_prompt":"say a","last_assistant_message":"a"}}`,
			true, "sim", "a", "Stop", 1},
		{"runner hook record without data", `{"time":"2026-01-02T03:04:05Z","event":"Stop"}`, true, "", "", "Stop", 0},
		{"other hook event", `{"hook_event_name":"Notification","session_id":"s1"}`, false, "s1", "", "Notification", 0},
	} {
		ev, ok := ParseHookEvent(c.line)
		if !ok || ev.Stop != c.stop || ev.Session != c.session || ev.Answer != c.answer || ev.Name != c.name2 || len(ev.Prompts) != c.prompts {
			t.Errorf("%s: %+v (ok %v)", c.name, ev, ok)
		}
	}
	for _, bad := range []string{"", "not json", `["a"]`, `"s"`} {
		if _, ok := ParseHookEvent(bad); ok {
			t.Errorf("%q read as an event", bad)
		}
	}
}

// TestTurnMatch: which turn-end events end the delivered turn.
func TestTurnMatch(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := TurnMatch{Since: since, EventsFrom: 0, Signature: "fix the parser", Session: "s1"}
	stop := HookEvent{Name: "Stop", Stop: true, Session: "s1"}
	for _, c := range []struct {
		name string
		ev   HookEvent
		ok   bool
	}{
		{"this turn's Stop", stop, true},
		{"a payload without time", HookEvent{Name: "Stop", Stop: true}, true},
		{"stale: stamped before the delivery", HookEvent{Name: "Stop", Stop: true, Session: "s1", Time: since.Add(-time.Millisecond)}, false},
		{"stamped after the delivery", HookEvent{Name: "Stop", Stop: true, Session: "s1", Time: since.Add(time.Millisecond)}, true},
		{"a sub-agent's stop", HookEvent{Name: "SubagentStop", Session: "s1"}, false},
		{"another session", HookEvent{Name: "Stop", Stop: true, Session: "s2"}, false},
		{"a side turn (Codex's title turn)", HookEvent{Name: "agent-turn-complete", Stop: true, Session: "s1", Prompts: []string{"Generate a concise, single-line task title"}}, false},
		{"the delivered prompt, pasted with CRs", HookEvent{Name: "agent-turn-complete", Stop: true, Prompts: []string{"note\r\nfix  the\tparser now"}}, true},
	} {
		if ok, why := m.Accepts(c.ev); ok != c.ok {
			t.Errorf("%s: accepted %v (%s), want %v", c.name, ok, why, c.ok)
		}
	}
	// Without a known session or signature, any Stop after the delivery.
	if ok, _ := (TurnMatch{Since: since}).Accepts(HookEvent{Name: "Stop", Stop: true, Session: "x", Prompts: []string{"y"}}); !ok {
		t.Error("an open match refused a Stop")
	}
}

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
	sim, _ := BuiltinProfile("sim")
	return &Monitor{TC: tc, Pane: pane, Profile: sim, Transcript: transcript, Events: events, Settle: 25 * time.Millisecond}, tc
}

func appendLine(t *testing.T, file, line string) time.Time {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := time.Now()
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
		time.Now().Add(-time.Minute).Format(time.RFC3339Nano))
	appendLine(t, m.Events, stale)
	// An untimed payload already in the file when a supervisor that did
	// not deliver starts: its turn cannot be told, so it is not taken.
	appendLine(t, m.Events, `{"hook_event_name":"Stop","session_id":"s1","last_assistant_message":"untimed old"}`)
	since := time.Now()
	m.Match = TurnMatch{Since: since, EventsFrom: -1, Signature: "task", Session: "s1"}
	var skipped []string
	m.Skipped = func(ev HookEvent, why string) { skipped = append(skipped, why) }

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
	m.Match.EventsFrom = fileSize(m.Events)
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
		res <- result{obs, err, time.Now()}
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
func TestMonitorHookNeverComes(t *testing.T) {
	m, _ := monitorPane(t, `printf '> task\n✻ Working… (esc to interrupt)\n'; sleep 0.3; printf '\033[2J\033[H> task\nthe answer\n\n╭───╮\n│ > │\n╰───╯\n'; exec sleep 600`)
	since := time.Now()
	m.Match = TurnMatch{Since: since, EventsFrom: 0}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	obs, err := m.Wait(ctx, GoalTurnEnd, since)
	if err != nil || obs.Via != "screen" || obs.Detection.State != StateReady {
		t.Fatalf("wait ended with %+v, %v; want the ready screen", obs, err)
	}
	if got := ScreenAnswer(m.Profile, obs.Screen); got != "the answer" {
		t.Errorf("screen answer %q", got)
	}
}

// TestGeminiChatAnswer: Gemini CLI 0.61's AfterAgent prompt_response
// repeats the streamed chunks after the answer; the answer comes from the
// chat file the payload names (a real one, taken from a turn through the
// mock), and only when that file has the named prompt's answer.
func TestGeminiChatAnswer(t *testing.T) {
	chat, err := filepath.Abs("testdata/gemini-chat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := "The answer streams word by word ANSWER-FIRST-LINE.\nA second line with the details ANSWER-DONE."
	garbled := want + " answer  streams  word  by  word"
	payload := func(path, prompt string) string {
		b, _ := json.Marshal(map[string]any{"session_id": "s", "hook_event_name": "AfterAgent", "transcript_path": path,
			"prompt": prompt, "prompt_response": garbled})
		return string(b)
	}
	half := filepath.Join(t.TempDir(), "half.jsonl")
	b, _ := os.ReadFile(chat)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var kept []string
	for _, l := range lines {
		if !strings.Contains(l, `"type":"gemini"`) {
			kept = append(kept, l)
		}
	}
	if len(kept) == len(lines) {
		t.Fatal("testdata has no gemini record")
	}
	if err := os.WriteFile(half, []byte(strings.Join(kept, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, line, want string
	}{
		{"the chat file's answer", payload(chat, "please do the ANSWER-TASK now"), want},
		{"another prompt's turn: the payload's", payload(chat, "some other prompt"), garbled},
		{"answer not written yet: the payload's", payload(half, "please do the ANSWER-TASK now"), garbled},
		{"no chat file: the payload's", payload(filepath.Join(t.TempDir(), "none"), "x"), garbled},
	} {
		ev, ok := ParseHookEvent(c.line)
		if !ok || !ev.Stop || ev.Answer != c.want {
			t.Errorf("%s: answer %q (ok %v, stop %v), want %q", c.name, ev.Answer, ok, ev.Stop, c.want)
		}
	}
}

// TestWaitHook: after the screen shows a turn's end, the supervisor of a
// CLI whose hook fires late waits for it: an accepted event written
// during the grace is returned at once (inotify), a stale one from before
// the delivery is not, and with none the grace runs out.
func TestWaitHook(t *testing.T) {
	events := filepath.Join(t.TempDir(), "ev.jsonl")
	since := time.Now()
	stale := `{"time":"` + since.Add(-time.Minute).Format(time.RFC3339Nano) + `","event":"Stop","data":{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"old"}}`
	if err := os.WriteFile(events, []byte(stale+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := &Monitor{Events: events, Match: TurnMatch{Since: since, EventsFrom: -1}}
	if ev := m.WaitHook(t.Context(), 200*time.Millisecond); ev != nil {
		t.Fatalf("stale event taken: %+v", ev)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		f, _ := os.OpenFile(events, os.O_APPEND|os.O_WRONLY, 0)
		fmt.Fprintf(f, `{"time":"%s","event":"Stop","data":{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"new"}}`+"\n", time.Now().Format(time.RFC3339Nano))
		f.Close()
	}()
	ev := m.WaitHook(t.Context(), 30*time.Second)
	if ev == nil || ev.Answer != "new" {
		t.Fatalf("WaitHook = %+v, want the new event", ev)
	}
}
