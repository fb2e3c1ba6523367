package mockapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// anthropicRequest is the part of a Messages API request the mock reads.
type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type anthropicBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// Name is a tool_use's tool.
	Name string `json:"name"`
	// Content is a tool_result's: a string or a list of blocks.
	Content json.RawMessage `json:"content"`
}

// anthropicBlocks decodes message content: a string or a list of blocks.
func anthropicBlocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var bs []anthropicBlock
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// conv reads the request's conversation. Its prompt is the latest user
// message with text and no tool result; text a CLI sends beside a tool
// result is context (Request.Context), never the prompt: in the tool
// result's own message (Claude Code 2.1.197 puts a hook's
// additionalContext there, as a system reminder) or in a system message
// after it (Claude Code 2.1.332: "role": "system" in messages). System
// messages never end the conversation: one that ends with a tool result
// and a system message after it still ends with a tool result.
func (req anthropicRequest) conv() conv {
	c := conv{model: req.Model, stream: req.Stream}
	for _, t := range req.Tools {
		c.tools = append(c.tools, t.Name)
	}
	last, prompt := -1, -1
	for i := len(req.Messages) - 1; i >= 0 && prompt < 0; i-- {
		m := req.Messages[i]
		if m.Role == "system" {
			continue
		}
		if last < 0 {
			last = i
		}
		if m.Role == "assistant" && c.calledTools == nil {
			for _, b := range anthropicBlocks(m.Content) {
				if b.Type == "tool_use" {
					c.calledTools = append(c.calledTools, b.Name)
				}
			}
		}
		if m.Role != "user" {
			continue
		}
		blocks := anthropicBlocks(m.Content)
		if hasToolResult(blocks) {
			c.toolResult = c.toolResult || i == last
			continue
		}
		if c.prompt = blockText(blocks); c.prompt != "" {
			prompt = i
		}
	}
	result := false
	for _, m := range req.Messages[prompt+1:] {
		blocks := anthropicBlocks(m.Content)
		switch {
		case m.Role == "user" && hasToolResult(blocks):
			result = true
			c.context += blockText(blocks)
			c.toolOutput += toolResultText(blocks)
		case m.Role == "system" && result:
			c.context += blockText(blocks)
		}
	}
	return c
}

// hasToolResult says whether blocks hold a tool result.
func hasToolResult(blocks []anthropicBlock) bool {
	return slices.ContainsFunc(blocks, func(b anthropicBlock) bool { return b.Type == "tool_result" })
}

// toolResultText is the text of blocks' tool results, each ending in a
// newline.
func toolResultText(blocks []anthropicBlock) string {
	var b strings.Builder
	for _, x := range blocks {
		if x.Type == "tool_result" && len(x.Content) > 0 {
			b.WriteString(blockText(anthropicBlocks(x.Content)))
		}
	}
	return b.String()
}

// blockText is the text of blocks' text blocks, each ending in a newline.
func blockText(blocks []anthropicBlock) string {
	var b strings.Builder
	for _, x := range blocks {
		if x.Type == "text" {
			b.WriteString(x.Text + "\n")
		}
	}
	return b.String()
}

func (s *Server) anthropic(w http.ResponseWriter, r *http.Request, body []byte, rec *Request, logNow func()) {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		badRequest(w, rec, fmt.Errorf("messages request: %w", err))
		return
	}
	c := req.conv()
	rp := s.decide(c)
	rec.fill(c, rp)
	if limited(w, rec, "anthropic", rp) {
		logNow()
		return
	}
	logNow()
	if !sleepCtx(r, rp.turn.Delay) {
		return
	}
	id := s.nextID("msg_mock_")
	model := req.Model
	stop := "end_turn"
	var block map[string]any
	if rp.tool != "" {
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": s.nextID("toolu_mock_"), "name": rp.tool, "input": rp.args}
	} else {
		block = map[string]any{"type": "text", "text": rp.text}
	}
	u := rp.usage()
	usage := map[string]any{"input_tokens": u.Input, "output_tokens": u.Output, "cache_creation_input_tokens": 0, "cache_read_input_tokens": u.Cached}
	content := []any{block}
	if rp.lead != "" {
		content = []any{map[string]any{"type": "text", "text": rp.lead}, block}
	}
	if !req.Stream {
		writeJSON(w, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	e := newSSE(w, r, rec)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": u.Input, "output_tokens": 1,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": u.Cached},
	}})
	e.event("ping", map[string]any{"type": "ping"})
	text := func(index int, text string) {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for i, ch := range chunks(text) {
			if i > 0 {
				e.sleep(rp.turn.ChunkDelay)
			}
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": ch}})
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
	}
	if rp.tool != "" {
		index := 0
		if rp.lead != "" {
			text(0, rp.lead)
			index = 1
		}
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": rp.tool, "input": map[string]any{}}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(rp.args)}})
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
	} else {
		text(0, rp.text)
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"input_tokens": u.Input, "output_tokens": u.Output,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": u.Cached}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}
