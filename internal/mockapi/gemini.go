package mockapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// geminiRequest is the part of a generateContent request the mock reads.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             *string         `json:"text"`
			FunctionResponse json.RawMessage `json:"functionResponse"`
		} `json:"parts"`
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

func (req geminiRequest) conv(model string, stream bool) conv {
	c := conv{model: model, stream: stream}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			c.tools = append(c.tools, f.Name)
		}
	}
	for i := len(req.Contents) - 1; i >= 0 && c.prompt == ""; i-- {
		m := req.Contents[i]
		if m.Role != "user" && m.Role != "" {
			continue
		}
		for _, p := range m.Parts {
			switch {
			case p.Text != nil:
				c.prompt += *p.Text + "\n"
			case len(p.FunctionResponse) > 0 && i == len(req.Contents)-1:
				c.toolResult = true
			}
		}
	}
	return c
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
	rp := s.decide(c)
	if rp.tool != "" && rp.input != "" {
		rp.tool, rp.input = "", ""
	}
	if gc := req.GenerationConfig; gc.ResponseMimeType == "application/json" {
		// Structured side request (router, next-speaker check): answer JSON.
		schema := gc.ResponseJSONSchema
		if len(schema) == 0 {
			schema = gc.ResponseSchema
		}
		rp.tool, rp.text = "", schemaText(schema, rp.text)
		if rp.text == "" {
			rp.text = "{}"
		}
	}
	rec.fill(c, rp)
	if limited(w, rec, "gemini", rp) {
		logNow()
		return
	}
	logNow()
	if !sleepCtx(r, rp.turn.Delay) {
		return
	}
	u := rp.usage()
	usage := map[string]any{"promptTokenCount": u.Input + u.Cached, "candidatesTokenCount": u.Output,
		"totalTokenCount": u.Input + u.Cached + u.Output, "cachedContentTokenCount": u.Cached}
	cand := func(parts []any, finish string) map[string]any {
		cd := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if finish != "" {
			cd["finishReason"] = finish
		}
		return map[string]any{"candidates": []any{cd}, "usageMetadata": usage, "modelVersion": model}
	}
	var whole []any
	if rp.tool != "" {
		var args map[string]any
		_ = json.Unmarshal(rp.args, &args)
		whole = []any{map[string]any{"functionCall": map[string]any{"name": rp.tool, "args": args}}}
	} else {
		whole = []any{map[string]any{"text": rp.text}}
	}
	if !stream {
		writeJSON(w, cand(whole, "STOP"))
		return
	}
	e := newSSE(w, r, rec) // the CLI asks for ?alt=sse
	if rp.tool != "" {
		e.event("", cand(whole, "STOP"))
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
		e.event("", cand([]any{map[string]any{"text": ch}}, fin))
	}
}
