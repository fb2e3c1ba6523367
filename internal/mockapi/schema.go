package mockapi

import (
	"encoding/json"
	"strings"
)

// schemaExample builds a small JSON value that satisfies a JSON schema (the
// OpenAPI flavour Gemini uses, with upper-case type names, or plain JSON
// Schema). The CLIs ask for such structured output in side requests (Gemini's
// model router and next-speaker check); an answer that does not parse makes
// them retry forever. Strings get text; integers and numbers get 1; an enum
// gets "user" when that is allowed (so "who speaks next" hands the turn back),
// else its first value.
func schemaExample(schema map[string]any, text string) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		for _, v := range enum {
			if v == "user" {
				return v
			}
		}
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	if typ == "" {
		if ts, ok := schema["type"].([]any); ok && len(ts) > 0 {
			typ, _ = ts[0].(string)
		}
	}
	if typ == "" {
		if _, ok := schema["properties"]; ok {
			typ = "object"
		}
	}
	switch strings.ToLower(typ) {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			ps, _ := p.(map[string]any)
			out[name] = schemaExample(ps, text)
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "null":
		return nil
	default:
		return text
	}
}

// schemaText returns the JSON text of schemaExample for a raw schema, or ""
// when raw is empty or not an object.
func schemaText(raw json.RawMessage, text string) string {
	var schema map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &schema) != nil || schema == nil {
		return ""
	}
	b, err := json.Marshal(schemaExample(schema, text))
	if err != nil {
		return ""
	}
	return string(b)
}
