package spend

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/runner-cli/runner/runner/profile"
)

// claudeFormat is Claude Code's transcript (JSON lines: {"type":
// "user"|"assistant", "message": {...}, "timestamp"}): the usage of the
// assistant messages after the turn's prompt, once per message id. A
// message is written once per content block, each line with the message's
// usage so far: the last line of a message id counts. Tool results are
// user lines too; they do not start a turn, and sidechains (sub-agents)
// are left out. Claude Code writes a prompt's line late at times, after
// the turn's first answer (seen with its prompt hook): a line's place is
// its timestamp, then its place in the file, so an answer written before
// its prompt still counts.
var claudeFormat = format{
	decode: claudeLine,
	// Most of a long transcript is tool results (user lines): known
	// without decoding them.
	skip: func(raw []byte) bool { return bytes.Contains(raw, toolResultKey) },
	late: func(raw []byte) (wait, early bool) {
		if bytes.Contains(raw, userType) {
			return false, false
		}
		return true, bytes.Contains(raw, assistantType)
	},
}

// Keys that tell a transcript line's kind without decoding it.
var (
	toolResultKey = []byte(`"tool_result"`)
	userType      = []byte(`"type":"user"`)
	assistantType = []byte(`"type":"assistant"`)
)

// claudeLine decodes a line of a Claude Code transcript: a user's prompt,
// or an assistant message with its usage.
func claudeLine(raw []byte, q query) (entry, bool) {
	var l struct {
		Type      string `json:"type"`
		Sidechain bool   `json:"isSidechain"`
		Message   struct {
			ID         string          `json:"id"`
			Content    json.RawMessage `json:"content"`
			StopReason string          `json:"stop_reason"`
			Usage      *struct {
				Input       int64 `json:"input_tokens"`
				Output      int64 `json:"output_tokens"`
				CacheRead   int64 `json:"cache_read_input_tokens"`
				CacheCreate int64 `json:"cache_creation_input_tokens"`
			} `json:"usage"`
		} `json:"message"`
	}
	if json.Unmarshal(raw, &l) != nil || l.Sidechain {
		return entry{}, false
	}
	m := l.Message
	switch {
	case l.Type == "user":
		text, isPrompt := claudeText(m.Content)
		return entry{prompt: true, begins: promptMatches(text, q.sig)}, isPrompt
	case l.Type == "assistant" && m.Usage != nil:
		text, isText := claudeText(m.Content)
		end := goesOn
		if m.StopReason == "end_turn" {
			end = ends
		}
		u := profile.Usage{Input: m.Usage.Input, Output: m.Usage.Output, Cached: m.Usage.CacheRead + m.Usage.CacheCreate}
		return entry{answer: isText, text: text, usage: &u, id: m.ID, end: end}, true
	}
	return entry{}, false
}

// claudeText is the text of a Claude Code message's content, and whether
// it has text (a string, or text blocks) rather than tool results or tool
// calls alone.
func claudeText(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false
	}
	var b strings.Builder
	text := false
	for _, bl := range blocks {
		switch bl.Type {
		case "text":
			b.WriteString(bl.Text)
			text = true
		case "tool_result":
			return "", false
		}
	}
	return b.String(), text
}
