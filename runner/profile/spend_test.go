package profile

import "testing"

func TestHookEventUsage(t *testing.T) {
	for _, tc := range []struct {
		line string
		want *Usage
	}{
		{`{"hook_event_name":"Stop","usage":{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":5,"cache_creation_input_tokens":2,"cost_usd":0.25}}`,
			&Usage{Input: 100, Output: 20, Cached: 7, CostUSD: 0.25, HasCost: true}},
		{`{"hook_event_name":"Stop","usage":{"input_tokens":100,"output_tokens":20}}`, &Usage{Input: 100, Output: 20}},
		{`{"hook_event_name":"Stop","usage":{"input_tokens":100}}`, nil}, // no output count: not a usage
		{`{"hook_event_name":"Stop","usage":"lots"}`, nil},
		{`{"hook_event_name":"Stop"}`, nil},
	} {
		ev, ok := ParseHookEvent(tc.line)
		if !ok || (ev.Usage == nil) != (tc.want == nil) || ev.Usage != nil && *ev.Usage != *tc.want {
			t.Errorf("ParseHookEvent(%s).Usage = %+v, want %+v", tc.line, ev.Usage, tc.want)
		}
	}
	ev, _ := ParseHookEvent(`{"type":"agent-turn-complete","thread-id":"th","turn-id":"tu"}`)
	if ev.Turn != "tu" || ev.Session != "th" {
		t.Errorf("Codex's payload: turn %q, session %q", ev.Turn, ev.Session)
	}
}
