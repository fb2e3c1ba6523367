package spend

import (
	"encoding/json"
	"strings"

	"github.com/runner-cli/runner/runner/profile"
)

// geminiFormat is a Gemini CLI chat file: the tokens of the "gemini"
// records after the turn's "user" record (a record rewritten as it
// streams counts once, by its id). A record's input counts its cached
// tokens, which are taken out; thoughts are output, tool-use prompt
// tokens input.
func geminiFormat() format { return chatFormat("gemini", true) }

// qwenFormat is a Qwen Code chat file (JSON lines: {"uuid", "type":
// "user"|"assistant"|"tool_result"|"system", "message": {"parts": …},
// "usageMetadata": {promptTokenCount, candidatesTokenCount,
// cachedContentTokenCount, thoughtsTokenCount}}): the usageMetadata of
// each assistant record after the turn's user record.
func qwenFormat() format { return chatFormat("assistant", false) }

// chatFormat is a chat file as Gemini CLI and Qwen Code write it: a
// "user" record is a prompt, a record of type answer an answer with its
// tokens; byID: a record rewritten as it streams counts once, by its id.
func chatFormat(answer string, byID bool) format {
	return format{decode: func(raw []byte, q query) (entry, bool) {
		var r chatRecord
		if json.Unmarshal(raw, &r) != nil {
			return entry{}, false
		}
		text := chatText(r.Content)
		if r.Content == nil {
			text = chatText(r.Message.Parts)
		}
		switch {
		case r.Type == "user" && r.toolResult():
			return entry{}, false // a tool's result, not a prompt
		case r.Type == "user":
			return promptEntry(text, q), true
		case r.Type == answer && r.callsTool():
			// A tool call, with any text it came with: not the answer.
			e := entry{usage: r.usage()}
			if byID {
				e.id = r.ID
			}
			return e, true
		case r.Type == answer:
			e := answerEntry(text)
			if e.usage = r.usage(); byID {
				e.id = r.ID
			}
			return e, true
		}
		return entry{}, false
	}}
}

// chatRecord is a line of a chat file: Gemini CLI's has its text in
// content and its tokens in tokens, Qwen Code's its text in message.parts
// and its tokens in usageMetadata.
type chatRecord struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
	Message struct {
		Parts json.RawMessage `json:"parts"`
	} `json:"message"`
	// ToolCalls are the tools a Gemini CLI answer calls.
	ToolCalls []json.RawMessage `json:"toolCalls"`
	Tokens    *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
		Tool     int64 `json:"tool"`
	} `json:"tokens"`
	Usage *struct {
		Prompt     int64 `json:"promptTokenCount"`
		Candidates int64 `json:"candidatesTokenCount"`
		Cached     int64 `json:"cachedContentTokenCount"`
		Thoughts   int64 `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
}

// callsTool says the record's model response calls a tool (Gemini CLI's
// toolCalls, a functionCall part): it is not the turn's last, and any
// text it has is not the answer.
func (r *chatRecord) callsTool() bool {
	return len(r.ToolCalls) > 0 || hasPart(r.Content, "functionCall") || hasPart(r.Message.Parts, "functionCall")
}

// toolResult says a "user" record is a tool's result (a functionResponse
// part, no text), not a prompt.
func (r *chatRecord) toolResult() bool {
	raw := r.Content
	if raw == nil {
		raw = r.Message.Parts
	}
	return hasPart(raw, "functionResponse") && strings.TrimSpace(chatText(raw)) == ""
}

// hasPart says content parts (a list of objects) have one with key.
func hasPart(raw json.RawMessage, key string) bool {
	var parts []map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return false
	}
	for _, p := range parts {
		if _, ok := p[key]; ok {
			return true
		}
	}
	return false
}

// usage is the record's tokens, nil when it has none.
func (r *chatRecord) usage() *profile.Usage {
	if t := r.Tokens; t != nil {
		return &profile.Usage{Input: t.Input - t.Cached + t.Tool, Cached: t.Cached, Output: t.Output + t.Thoughts}
	}
	if x := r.Usage; x != nil {
		return &profile.Usage{Input: x.Prompt - x.Cached, Cached: x.Cached, Output: x.Candidates + x.Thoughts}
	}
	return nil
}

// copilotFormat is a GitHub Copilot CLI session's events file: the
// session.usage_record events after the turn's user.message, one per
// model response, all summed (inputTokens counts the cache's reads and
// writes, which are taken out). Each model response ends with an
// assistant.turn_end; the turn has ended once one follows an answer (an
// assistant.message with content that calls no tool: one that calls a
// tool, with text or not, is followed by another response).
var copilotFormat = format{decode: copilotLine}

func copilotLine(raw []byte, q query) (entry, bool) {
	var line struct {
		Type string `json:"type"`
		Data struct {
			copilotMessage
			Usage *struct {
				Input      int64 `json:"inputTokens"`
				Output     int64 `json:"outputTokens"`
				CacheRead  int64 `json:"cacheReadTokens"`
				CacheWrite int64 `json:"cacheWriteTokens"`
			} `json:"usage"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &line) != nil {
		return entry{}, false
	}
	switch line.Type {
	case "user.message":
		return promptEntry(line.Data.Content, q), true
	case "session.usage_record":
		if u := line.Data.Usage; u != nil {
			cached := u.CacheRead + u.CacheWrite
			return entry{usage: &profile.Usage{Input: u.Input - cached, Cached: cached, Output: u.Output}, end: goesOn}, true
		}
	case "assistant.message":
		if line.Data.callsTool() {
			return entry{end: callsTool}, true
		}
		return answerEntry(line.Data.Content), true
	case "assistant.turn_end":
		return entry{end: endsAnswered}, true
	}
	return entry{}, false
}

// promptEntry is a user's prompt, text: the turn's if it holds q's sig.
func promptEntry(text string, q query) entry {
	return entry{prompt: true, begins: promptMatches(text, q.sig)}
}

// answerEntry is an answer, text, when it is not blank (a tool call's
// message has none).
func answerEntry(text string) entry {
	return entry{answer: strings.TrimSpace(text) != "", text: text}
}

// chatText is a chat record's content: a string, or parts with text.
func chatText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}
