package profile

import (
	"testing"
	"time"
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
