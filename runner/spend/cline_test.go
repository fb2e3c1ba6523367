package spend

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

// clineMessages is a Cline CLI 3.0.65 session's messages file (shaped as
// it writes it, trimmed): an earlier turn, then the turn asked for, a
// tool call that came with text and its result, then the answer.
const clineMessages = `{"version":1,"messages":[
 {"id":"m1","role":"user","content":[{"type":"text","text":"first prompt"}]},
 {"id":"m2","role":"assistant","content":[{"type":"text","text":"first answer"}],"metrics":{"inputTokens":10,"outputTokens":5,"cacheReadTokens":0,"cacheWriteTokens":0}},
 {"id":"m3","role":"user","content":[{"type":"text","text":"please do the SPEND-ONE now"}]},
 {"id":"m4","role":"assistant","content":[{"type":"text","text":"I'll create the file."},{"type":"tool_use","id":"call_mock_2","name":"run_commands","input":{}}],"metrics":{"inputTokens":2023,"outputTokens":56,"cacheReadTokens":789,"cacheWriteTokens":0}},
 {"id":"m5","role":"user","content":[{"type":"tool_result","tool_use_id":"call_mock_2","name":"run_commands","content":[]}]},
 {"id":"m6","role":"assistant","content":[{"type":"text","text":"SPEND-ONE-DONE"}],"metrics":{"inputTokens":2023,"outputTokens":56,"cacheReadTokens":789,"cacheWriteTokens":0}}
],"system_prompt":"You are Cline"}`

// TestClineTurn: a Cline CLI turn's spend is the metrics of its
// assistant messages after its prompt (found by the prompt among the
// sessions under ~/.cline/data/sessions), the cache's tokens taken out of
// the input; a turn whose last message is a tool call has not ended; a
// prompt in no session is unknown.
func TestClineTurn(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".cline", "data", "sessions", "1796191395504_i2my3")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "1796191395504_i2my3.messages.json")
	if err := os.WriteFile(path, []byte(clineMessages), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	p := &profile.Profile{Spend: profile.SpendCline}
	u, ok, complete := TurnUsage(p, profile.HookEvent{}, "SPEND-ONE", env)
	want := profile.Usage{Input: 2 * 1234, Output: 2 * 56, Cached: 2 * 789}
	if !ok || !complete || u != want {
		t.Errorf("got %+v ok %v complete %v; want %+v, ok, complete", u, ok, complete, want)
	}
	if u, ok, complete := TurnUsage(p, profile.HookEvent{}, "first prompt", env); ok || !complete {
		t.Errorf("an earlier prompt (not the session's latest): got %+v ok %v complete %v; want unknown", u, ok, complete)
	}
	if tr := clineTurn(path, "SPEND-ONE"); tr.last != "SPEND-ONE-DONE" {
		t.Errorf("answer %q, want the one after the tool", tr.last)
	}
	if a, ok := TurnAnswer(p, "SPEND-ONE", env); !ok || a != "SPEND-ONE-DONE" {
		t.Errorf("TurnAnswer: %q %v, want the answer after the tool", a, ok)
	}
	if a, ok := TurnAnswer(&profile.Profile{Spend: profile.SpendClaude}, "SPEND-ONE", env); ok {
		t.Errorf("TurnAnswer of a CLI whose hook names its record: %q, want none", a)
	}
	cut := clineMessages[:len(clineMessages)-len(`,
 {"id":"m6","role":"assistant","content":[{"type":"text","text":"SPEND-ONE-DONE"}],"metrics":{"inputTokens":2023,"outputTokens":56,"cacheReadTokens":789,"cacheWriteTokens":0}}
],"system_prompt":"You are Cline"}`)] + `],"system_prompt":"You are Cline"}`
	if err := os.WriteFile(path, []byte(cut), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, complete := TurnUsage(p, profile.HookEvent{}, "SPEND-ONE", env); !ok || complete {
		t.Errorf("after the tool's result, before the answer: ok %v complete %v; want ok, not complete", ok, complete)
	}
	if a, ok := TurnAnswer(p, "SPEND-ONE", env); ok {
		t.Errorf("TurnAnswer before the answer: %q, want none yet (the screen's is taken)", a)
	}
}
