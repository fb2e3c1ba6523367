package spend

import (
	"encoding/json"
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/profile"
)

// codexFormat is a Codex rollout file: the thread's running total
// (token_count events' total_token_usage) at the turn's end, less the
// total before it began. The turn is the notify payload's turn id (its
// task_started event), else the last user message that holds sig (a
// user_message event, or a user message item).
var codexFormat = format{
	decode: codexLine,
	// Tool calls and their output: nothing of the turn's spend.
	skip:   func(raw []byte) bool { return !codexKeys.Re().MatchString(string(raw[:min(len(raw), 160)])) },
	totals: true,
}

// codexKeys matches the start of the rollout lines codexLine reads (the
// payload's type comes first in Codex's records).
var codexKeys = textutil.LazyRegexp(`"type":"(?:token_count|task_started|task_complete|user_message|message)"`)

// codexLine decodes a line of a Codex rollout file.
func codexLine(raw []byte, q query) (entry, bool) {
	var line struct {
		Type    string `json:"type"`
		Payload struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			TurnID  string          `json:"turn_id"`
			Message string          `json:"message"`
			Content json.RawMessage `json:"content"`
			Last    *string         `json:"last_agent_message"`
			Info    *struct {
				Total struct {
					Input  int64 `json:"input_tokens"`
					Cached int64 `json:"cached_input_tokens"`
					Output int64 `json:"output_tokens"`
				} `json:"total_token_usage"`
			} `json:"info"`
		} `json:"payload"`
	}
	if json.Unmarshal(raw, &line) != nil {
		return entry{}, false
	}
	pl, event, item := line.Payload, line.Type == "event_msg", line.Type == "response_item"
	switch {
	case event && pl.Type == "task_started":
		return entry{begins: q.turn != "" && pl.TurnID == q.turn}, true
	case event && pl.Type == "user_message":
		return entry{prompt: true, begins: q.turn == "" && promptMatches(pl.Message, q.sig)}, true
	case item && pl.Type == "message" && pl.Role == "user":
		return entry{prompt: true, begins: q.turn == "" && q.sig != "" && promptMatches(codexText(pl.Content), q.sig)}, true
	case item && pl.Type == "message" && pl.Role == "assistant":
		return entry{answer: true, text: codexText(pl.Content)}, true
	case event && pl.Type == "token_count" && pl.Info != nil:
		t := pl.Info.Total
		return entry{usage: &profile.Usage{Input: t.Input - t.Cached, Cached: t.Cached, Output: t.Output}}, true
	case event && pl.Type == "task_complete" && (q.turn == "" || pl.TurnID == q.turn):
		e := entry{end: ends}
		if pl.Last != nil {
			e.answer, e.text = true, *pl.Last
		}
		return e, true
	}
	return entry{}, false
}

// codexText is the text of a Codex message item's content parts
// (input_text, output_text).
func codexText(raw json.RawMessage) string {
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
