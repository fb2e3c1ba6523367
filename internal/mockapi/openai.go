package mockapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/runner-cli/runner/internal/clock"
)

// responsesRequest is the part of a Responses API request the mock reads.
type responsesRequest struct {
	Model  string          `json:"model"`
	Stream bool            `json:"stream"`
	Input  json.RawMessage `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func (req responsesRequest) conv() conv {
	c := conv{model: req.Model, stream: req.Stream}
	for _, t := range req.Tools {
		c.tools = append(c.tools, t.Name)
	}
	var items []responsesItem
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		c.prompt = s
		return c
	}
	_ = json.Unmarshal(req.Input, &items)
	if n := len(items); n > 0 {
		switch items[n-1].Type {
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			c.toolResult = true
		}
	}
	for i := len(items) - 1; i >= 0 && c.prompt == ""; i-- {
		it := items[i]
		if it.Role != "user" {
			continue
		}
		c.prompt = openaiText(it.Content)
	}
	return c
}

// openaiText extracts the text of a content field: a string or a list of
// parts with a "text" field.
func openaiText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	out := ""
	for _, p := range parts {
		out += p.Text + "\n"
	}
	return out
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request, body []byte, rec *Request, logNow func()) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		badRequest(w, rec, fmt.Errorf("responses request: %w", err))
		return
	}
	c := req.conv()
	rp := s.decide(c)
	rec.fill(c, rp)
	if limited(w, rec, "responses", rp) {
		logNow()
		return
	}
	logNow()
	if !sleepCtx(r, rp.turn.Delay) {
		return
	}
	respID := s.nextID("resp_mock_")
	var item map[string]any
	if rp.tool != "" {
		callID := s.nextID("call_mock_")
		if rp.input != "" {
			item = map[string]any{"type": "custom_tool_call", "id": s.nextID("ctc_mock_"), "call_id": callID,
				"name": rp.tool, "input": rp.input, "status": "completed"}
		} else {
			item = map[string]any{"type": "function_call", "id": s.nextID("fc_mock_"), "call_id": callID,
				"name": rp.tool, "arguments": string(rp.args), "status": "completed"}
		}
	} else {
		item = map[string]any{"type": "message", "id": s.nextID("msg_mock_"), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": rp.text, "annotations": []any{}}}}
	}
	items := []any{item}
	if rp.tool != "" && rp.lead != "" {
		leadItem := map[string]any{"type": "message", "id": s.nextID("msg_mock_"), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": rp.lead, "annotations": []any{}}}}
		items = []any{leadItem, item}
	}
	u := rp.usage()
	usage := map[string]any{"input_tokens": u.Input + u.Cached, "output_tokens": u.Output, "total_tokens": u.Input + u.Cached + u.Output,
		"input_tokens_details": map[string]any{"cached_tokens": u.Cached}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	resp := func(status string, output []any) map[string]any {
		m := map[string]any{"id": respID, "object": "response", "created_at": clock.Now().Unix(), "status": status,
			"model": req.Model, "output": output}
		if status == "completed" {
			m["usage"] = usage
		}
		return m
	}
	if !req.Stream {
		writeJSON(w, resp("completed", items))
		return
	}
	streamResponse(newSSE(w, r, rec), rp, items, resp)
}

// streamResponse sends a Responses API answer of items (messages, a
// function or custom tool call) as server-sent events: a message's text in
// chunks ChunkDelay apart, a call whole.
func streamResponse(e *sse, rp reply, items []any, resp func(status string, output []any) map[string]any) {
	e.event("response.created", map[string]any{"type": "response.created", "response": resp("in_progress", []any{})})
	for index, it := range items {
		item := it.(map[string]any)
		if item["type"] != "message" {
			e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": index, "item": item})
			e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": index, "item": item})
			continue
		}
		text := item["content"].([]any)[0].(map[string]any)["text"].(string)
		added := map[string]any{"type": "message", "id": item["id"], "role": "assistant", "status": "in_progress", "content": []any{}}
		e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": index, "item": added})
		e.event("response.content_part.added", map[string]any{"type": "response.content_part.added", "item_id": item["id"],
			"output_index": index, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for i, ch := range chunks(text) {
			if i > 0 {
				e.sleep(rp.turn.ChunkDelay)
			}
			e.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": item["id"],
				"output_index": index, "content_index": 0, "delta": ch})
		}
		e.event("response.output_text.done", map[string]any{"type": "response.output_text.done", "item_id": item["id"],
			"output_index": index, "content_index": 0, "text": text})
		e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": index, "item": item})
	}
	e.event("response.completed", map[string]any{"type": "response.completed", "response": resp("completed", items)})
}

// chatRequest is the part of a Chat Completions request the mock reads.
type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (req chatRequest) conv() conv {
	c := conv{model: req.Model, stream: req.Stream}
	for _, t := range req.Tools {
		c.tools = append(c.tools, t.Function.Name)
	}
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
		c.toolResult = true
	}
	prompt := -1
	for i := len(req.Messages) - 1; i >= 0 && c.prompt == ""; i-- {
		if req.Messages[i].Role == "user" {
			c.prompt, prompt = openaiText(req.Messages[i].Content), i
		}
	}
	// A hook's context comes in the tool results' own text in this
	// dialect (Qwen Code's PostToolUse and an OpenCode plugin's or a pi
	// extension's tool result append to it): the tool messages since the
	// prompt are the request's context.
	for _, m := range req.Messages[prompt+1:] {
		if m.Role == "tool" {
			c.context += openaiText(m.Content) + "\n"
		}
	}
	return c
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, body []byte, rec *Request, logNow func()) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		badRequest(w, rec, fmt.Errorf("chat completions request: %w", err))
		return
	}
	c := req.conv()
	rp := s.decide(c)
	if rp.tool != "" && rp.input != "" {
		// A freeform tool (apply_patch) has no chat-completions form: answer text.
		rp.tool, rp.input, rp.lead = "", "", ""
	}
	rec.fill(c, rp)
	if limited(w, rec, "chat", rp) {
		logNow()
		return
	}
	logNow()
	if !sleepCtx(r, rp.turn.Delay) {
		return
	}
	id := s.nextID("chatcmpl_mock_")
	created := clock.Now().Unix()
	finish := "stop"
	var toolCall map[string]any
	if rp.tool != "" {
		finish = "tool_calls"
		toolCall = map[string]any{"index": 0, "id": s.nextID("call_mock_"), "type": "function",
			"function": map[string]any{"name": rp.tool, "arguments": string(rp.args)}}
	}
	u := rp.usage()
	usage := map[string]any{"prompt_tokens": u.Input + u.Cached, "completion_tokens": u.Output, "total_tokens": u.Input + u.Cached + u.Output,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached}}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": rp.text}
		if toolCall != nil {
			delete(toolCall, "index")
			var content any
			if rp.lead != "" {
				content = rp.lead
			}
			msg = map[string]any{"role": "assistant", "content": content, "tool_calls": []any{toolCall}}
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	chunk := func(delta map[string]any, fin any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}}
	}
	e := newSSE(w, r, rec)
	text := func(text string) {
		e.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for i, ch := range chunks(text) {
			if i > 0 {
				e.sleep(rp.turn.ChunkDelay)
			}
			e.event("", chunk(map[string]any{"content": ch}, nil))
		}
	}
	switch {
	case toolCall == nil:
		text(rp.text)
	case rp.lead != "":
		text(rp.lead)
		e.event("", chunk(map[string]any{"tool_calls": []any{toolCall}}, nil))
	default:
		e.event("", chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{toolCall}}, nil))
	}
	last := chunk(map[string]any{}, finish)
	last["usage"] = usage
	e.event("", last)
	e.event("", "[DONE]")
}
