package spend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

func TestLiveUsage(t *testing.T) {
	home := t.TempDir()
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	// A Claude Code transcript in the middle of its second turn: the tool
	// call is written, the answer not yet.
	transcript := writeLines(t, "claude.jsonl", claudeTurn[:6]...)
	rollout := filepath.Join(home, ".codex", "sessions", "2026", "11", "27", "rollout-2026-11-27T07-56-14-th-1.jsonl")
	if err := os.MkdirAll(filepath.Dir(rollout), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rollout, []byte(strings.Join(codexTurn[:7], "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The task's events: an earlier turn's end (Stop, with its usage),
	// then, from byte `from` on, what came during the running turn.
	before := []string{
		`{"time":"2026-11-27T10:00:00Z","event":"Stop","data":{"hook_event_name":"Stop","session_id":"s1","transcript_path":"` + transcript + `","usage":{"input_tokens":9,"output_tokens":9}}}`,
	}
	from := int64(len(before[0]) + 1)
	during := []string{
		`{"time":"2026-11-27T10:00:05Z","event":"Stop","data":{"hook_event_name":"Usage","usage":{"input_tokens":100,"output_tokens":20,"cost_usd":0.25}}}`,
		`{"time":"2026-11-27T10:00:06Z","event":"Stop","data":{"hook_event_name":"Usage","usage":{"input_tokens":300,"output_tokens":40,"cost_usd":0.5}}}`,
		`{"time":"2026-11-27T10:00:07Z","event":"Stop","data":{"hook_event_name":"Usage","usage":{"input_tok`, // still being written
	}
	events := writeLines(t, "events.jsonl", append(before, during...)...)
	raw, _ := os.ReadFile(events)
	if err := os.WriteFile(events, []byte(strings.TrimSuffix(string(raw), "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	onlyBefore := writeLines(t, "before.jsonl", before...)
	prompt := writeLines(t, "prompt.jsonl",
		`{"hook_event_name":"UserPromptSubmit","session_id":"s2","transcript_path":"`+transcript+`","prompt":"please do the SPEND-ONE now"}`)
	codexEvents := writeLines(t, "codex-events.jsonl",
		`{"type":"agent-turn-complete","thread-id":"th-1","turn-id":"turn-0","input-messages":["earlier"],"last-assistant-message":"old"}`)

	sim := &profile.Profile{Name: "sim", Spend: profile.SpendHook}
	claude := &profile.Profile{Name: "claude", Spend: profile.SpendClaude}
	codex := &profile.Profile{Name: "codex", Spend: profile.SpendCodex}
	for _, tc := range []struct {
		name   string
		p      *profile.Profile
		events string
		from   int64
		sig    string
		env    func(string) string
		want   profile.Usage
		ok     bool
	}{
		{"hook: the last usage event since the delivery", sim, events, from, "SPEND-ONE", env, profile.Usage{Input: 300, Output: 40, CostUSD: 0.5, HasCost: true}, true},
		{"hook: an earlier turn's end is not this turn's", sim, onlyBefore, 0, "SPEND-ONE", env, profile.Usage{}, false},
		{"hook: the delivery's offset not known", sim, events, -1, "SPEND-ONE", env, profile.Usage{}, false},
		{"claude: the transcript an earlier turn named, this turn's prompt", claude, onlyBefore, int64(len(before[0]) + 1), "please do the SPEND-ONE",
			env, profile.Usage{Input: 1234, Output: 56, Cached: 789}, true},
		{"claude: the prompt hook names it on a first turn", claude, prompt, 0, "please do the SPEND-ONE", env, profile.Usage{Input: 1234, Output: 56, Cached: 789}, true},
		{"claude: the prompt not in the record yet", claude, prompt, 0, "a prompt not written yet", env, profile.Usage{}, false},
		{"claude: the record on a host", claude, prompt, 0, "please do the SPEND-ONE", nil, profile.Usage{}, false},
		{"codex: the thread an earlier turn named, by the prompt", codex, codexEvents, 0, "please do the SPEND-ONE", env, profile.Usage{Input: 2123 - 829 - 60, Output: 56, Cached: 789}, true},
		{"no events file", claude, filepath.Join(home, "none"), 0, "please do", env, profile.Usage{}, false},
		{"no prompt to find", claude, prompt, 0, "", env, profile.Usage{}, false},
		{"no spend record", &profile.Profile{Name: "aider"}, events, from, "x", env, profile.Usage{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := LiveUsage(tc.p, tc.events, tc.from, tc.sig, tc.env)
			if ok != tc.ok || got != tc.want {
				t.Errorf("LiveUsage = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestLiveUsageCopilotFirstTurn: on a task's first turn no hook event has
// named Copilot CLI's events file yet: the session whose latest prompt is
// the turn's is found under $COPILOT_HOME/session-state, not one whose
// latest prompt is another's (an older session, another task's).
func TestLiveUsageCopilotFirstTurn(t *testing.T) {
	home := t.TempDir()
	env := func(k string) string {
		if k == "COPILOT_HOME" {
			return home
		}
		return ""
	}
	write := func(session string, lines ...string) {
		dir := filepath.Join(home, "session-state", session)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The running turn: its tool call's response recorded, not the rest.
	write("aaaa-running", copilotToolText[:5]...)
	// Another session that once had the same prompt, then another.
	write("bbbb-other", append(append([]string(nil), copilotTurn...), `{"type":"user.message","data":{"content":"something else"}}`,
		`{"type":"session.usage_record","data":{"usage":{"inputTokens":5,"outputTokens":5}}}`)...)
	events := writeLines(t, "events.jsonl") // the task's: no hook event yet
	copilot := &profile.Profile{Name: "copilot", Spend: profile.SpendCopilot}
	got, ok := LiveUsage(copilot, events, 0, "please do the SPEND-ONE", env)
	if want := (profile.Usage{Input: 2023 - 789, Cached: 789, Output: 56}); !ok || got != want {
		t.Errorf("LiveUsage = %+v, %v; want the running session's first response %+v", got, ok, want)
	}
	if got, ok := LiveUsage(copilot, events, 0, "a prompt no session has", env); ok {
		t.Errorf("LiveUsage for a prompt no session has = %+v, want none", got)
	}
	if got := copilotSessionEvents(env, "something else"); !strings.Contains(got, "bbbb-other") {
		t.Errorf("copilotSessionEvents(something else) = %q, want bbbb-other's", got)
	}
}
