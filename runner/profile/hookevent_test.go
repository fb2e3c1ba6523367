package profile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// Copilot's agentStop names its session's events file, which has the
// answer: the turn's last non-empty assistant message (a tool call's
// message has none), never an earlier turn's.
func TestCopilotAnswer(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "events.jsonl")
	body := `{"type":"session.start","data":{}}
{"type":"user.message","data":{"content":"first"}}
{"type":"assistant.message","data":{"content":"first answer"}}
{"type":"user.message","data":{"content":"create a file"}}
{"type":"assistant.message","data":{"content":"","toolRequests":[{"name":"create"}]}}
{"type":"tool.execution_complete","data":{}}
{"type":"assistant.message","data":{"content":"I wrote hello.txt. Done."}}
{"type":"assistant.turn_end","data":{}}
`
	if err := os.WriteFile(events, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	line := `{"event":"Stop","data":{"sessionId":"4835963a-5a43","transcriptPath":` + strconv.Quote(events) + `,"stopReason":"end_turn"}}`
	ev, ok := ParseHookEvent(line)
	if !ok || !ev.Stop || ev.HasAnswer || ev.AnswerFile != events || ev.Session != "4835963a-5a43" {
		t.Errorf("ParseHookEvent = %+v, %v", ev, ok)
	}
	if a, ok := ev.LateAnswer("create a file"); !ok || a != "I wrote hello.txt. Done." {
		t.Errorf("LateAnswer = %q, %v", a, ok)
	}
	// A turn with no answer yet: none, not the turn before's.
	if err := os.WriteFile(events, []byte(body+`{"type":"user.message","data":{"content":"again"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if a, ok := ev.LateAnswer(""); ok {
		t.Errorf("answer %q from an earlier turn", a)
	}
	// By the prompt: the file a turn late has no answer to this turn's.
	if a, ok := copilotAnswer(events, "again"); ok {
		t.Errorf("answer %q to another prompt", a)
	}
	if a, ok := copilotAnswer(events, "create a"); !ok || a != "I wrote hello.txt. Done." {
		t.Errorf("the answer to 'create a file' = %q, %v", a, ok)
	}
	if _, ok := copilotAnswer(filepath.Join(dir, "missing"), ""); ok {
		t.Error("an answer from a missing file")
	}
}
