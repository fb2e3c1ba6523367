package mockapi

import (
	"strings"
	"testing"
)

// TestToolCallMCP: a turn's Tool is called under the name the CLI offers
// it by (Claude Code's mcp__SERVER__NAME), with its arguments; the tool's
// result, sent back, is the request's ToolOutput and gets the turn's text.
func TestToolCallMCP(t *testing.T) {
	s := Start([]Turn{{Match: "LIST", Text: "LISTED", Tool: &ToolCall{Name: "runner_list", Args: map[string]any{"active": true}}}}, Options{})
	defer s.Close()
	u := s.URL() + "/v1/messages"
	_, body := post(t, u, `{"model":"m","messages":[{"role":"user","content":"LIST"}],"tools":[{"name":"Bash"},{"name":"mcp__runner__runner_list"}]}`)
	if !strings.Contains(body, `"name":"mcp__runner__runner_list"`) || !strings.Contains(body, `"input":{"active":true}`) {
		t.Errorf("the tool call: %s", body)
	}
	_, body = post(t, u, `{"model":"m","messages":[{"role":"user","content":"LIST"}],"tools":[{"name":"Bash"}]}`)
	if !strings.Contains(body, "LISTED") || strings.Contains(body, "tool_use") {
		t.Errorf("no such tool offered: want the text, got %s", body)
	}
	_, body = post(t, u, `{"model":"m","messages":[{"role":"user","content":"LIST"},
		{"role":"assistant","content":[{"type":"tool_use","id":"tu1","name":"mcp__runner__runner_list","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":[{"type":"text","text":"[{\"id\":\"t_abc\"}]"}]}]}],
		"tools":[{"name":"mcp__runner__runner_list"}]}`)
	if !strings.Contains(body, "LISTED") {
		t.Errorf("after the tool result: %s", body)
	}
	reqs := s.Requests()
	if last := reqs[len(reqs)-1]; !last.ToolResult || last.ToolOutput != "[{\"id\":\"t_abc\"}]\n" {
		t.Errorf("the tool result logged as %+v", last)
	}
}
