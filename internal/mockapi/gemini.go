package mockapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// geminiRequest is the part of a generateContent request the mock reads.
type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	GenerationConfig struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
	} `json:"generationConfig"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// geminiPart is one part of a content: text or a function's response.
type geminiPart struct {
	Text             *string         `json:"text"`
	FunctionResponse json.RawMessage `json:"functionResponse"`
}

func (req geminiRequest) conv(model string, stream bool) conv {
	c := conv{model: model, stream: stream}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			c.tools = append(c.tools, f.Name)
		}
	}
	// The prompt is the latest user content with text and no function
	// response. A hook's context comes with the tool results (Gemini CLI's
	// AfterTool appends "<hook_context>…" to the result, or as a text part
	// beside it): the text of the function responses since the prompt,
	// and of text parts beside them, is the request's context.
	var context []string
	for i := len(req.Contents) - 1; i >= 0 && c.prompt == ""; i-- {
		m := req.Contents[i]
		if m.Role != "user" && m.Role != "" {
			continue
		}
		result := slices.ContainsFunc(m.Parts, func(p geminiPart) bool { return len(p.FunctionResponse) > 0 })
		var text, ctx strings.Builder
		for _, p := range m.Parts {
			switch {
			case len(p.FunctionResponse) > 0:
				c.toolResult = c.toolResult || i == len(req.Contents)-1
				jsonStrings(p.FunctionResponse, &ctx)
			case p.Text != nil && result:
				ctx.WriteString(*p.Text + "\n")
			case p.Text != nil:
				text.WriteString(*p.Text + "\n")
			}
		}
		c.prompt = text.String()
		context = append(context, ctx.String())
	}
	slices.Reverse(context)
	c.context = strings.Join(context, "")
	return c
}

// jsonStrings writes the string values found in the JSON value raw to b,
// each followed by a newline.
func jsonStrings(raw json.RawMessage, b *strings.Builder) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x + "\n")
		case []any:
			for _, y := range x {
				walk(y)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		}
	}
	walk(v)
}

// gemini serves POST .../models/MODEL:ACTION (generateContent,
// streamGenerateContent, countTokens).
func (s *Server) gemini(w http.ResponseWriter, r *http.Request, body []byte, rec *Request, logNow func()) {
	tail := r.URL.Path[strings.LastIndex(r.URL.Path, "/models/")+len("/models/"):]
	model, action, _ := strings.Cut(tail, ":")
	if action == "countTokens" {
		rec.Model, rec.Reply = model, "countTokens"
		writeJSON(w, map[string]any{"totalTokens": len(body)/4 + 1})
		return
	}
	if action != "generateContent" && action != "streamGenerateContent" {
		rec.Reply = "status 404"
		w.WriteHeader(http.StatusNotFound)
		writeJSON(w, map[string]any{"error": map[string]any{"code": 404, "message": "mockapi: unknown action " + action, "status": "NOT_FOUND"}})
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		badRequest(w, rec, fmt.Errorf("%s request: %w", action, err))
		return
	}
	stream := action == "streamGenerateContent"
	c := req.conv(model, stream)
	rp := req.fit(s.decide(c))
	rec.fill(c, rp)
	if limited(w, rec, "gemini", rp) {
		logNow()
		return
	}
	logNow()
	if !sleepCtx(r, rp.turn.Delay) {
		return
	}
	g := geminiAnswer{model: model, usage: geminiUsage(rp.usage())}
	if !stream {
		writeJSON(w, g.response(g.parts(rp), "STOP"))
		return
	}
	g.stream(newSSE(w, r, rec), rp) // the CLI asks for ?alt=sse
}

// fit makes the mock's reply one the request can take: a freeform tool
// (an input, no arguments) has no Gemini form, so the answer is text; and
// a structured side request (router, next-speaker check) is answered
// with JSON.
func (req geminiRequest) fit(rp reply) reply {
	if rp.tool != "" && rp.input != "" {
		rp.tool, rp.input, rp.lead = "", "", ""
	}
	if gc := req.GenerationConfig; gc.ResponseMimeType == "application/json" {
		schema := gc.ResponseJSONSchema
		if len(schema) == 0 {
			schema = gc.ResponseSchema
		}
		rp.tool, rp.lead, rp.text = "", "", schemaText(schema, rp.text)
		if rp.text == "" {
			rp.text = "{}"
		}
	}
	return rp
}

// geminiUsage is a turn's usage as Gemini's usageMetadata.
func geminiUsage(u Usage) map[string]any {
	return map[string]any{"promptTokenCount": u.Input + u.Cached, "candidatesTokenCount": u.Output,
		"totalTokenCount": u.Input + u.Cached + u.Output, "cachedContentTokenCount": u.Cached}
}

// geminiAnswer writes the responses of one generateContent answer: each
// with the model and the turn's whole usage.
type geminiAnswer struct {
	model string
	usage map[string]any
}

// response is one generateContent response of the model with parts;
// finish, if set, ends the answer.
func (g geminiAnswer) response(parts []any, finish string) map[string]any {
	cd := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cd["finishReason"] = finish
	}
	return map[string]any{"candidates": []any{cd}, "usageMetadata": g.usage, "modelVersion": g.model}
}

// parts is the whole of rp as content parts: a function call (after the
// text that comes with it) or a text.
func (geminiAnswer) parts(rp reply) []any {
	if rp.tool != "" {
		var args map[string]any
		_ = json.Unmarshal(rp.args, &args)
		call := map[string]any{"functionCall": map[string]any{"name": rp.tool, "args": args}}
		if rp.lead != "" {
			return []any{map[string]any{"text": rp.lead}, call}
		}
		return []any{call}
	}
	return []any{map[string]any{"text": rp.text}}
}

// stream sends rp as server-sent events: a function call whole (the text
// that comes with it first, in a response of its own), a text in chunks
// ChunkDelay apart, the last one finishing the answer.
func (g geminiAnswer) stream(e *sse, rp reply) {
	if rp.tool != "" {
		parts := g.parts(rp)
		if len(parts) > 1 {
			e.event("", g.response(parts[:1], ""))
			parts = parts[1:]
		}
		e.event("", g.response(parts, "STOP"))
		return
	}
	parts := chunks(rp.text)
	for i, ch := range parts {
		if i > 0 {
			e.sleep(rp.turn.ChunkDelay)
		}
		fin := ""
		if i == len(parts)-1 {
			fin = "STOP"
		}
		e.event("", g.response([]any{map[string]any{"text": ch}}, fin))
	}
}
