//go:build realagents

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/state"
)

// TestRealAgentsMCPClient: a real agent CLI is runner's MCP client (issue
// 52 §3). Claude Code, given `runner mcp` (stdio) as a user MCP server in
// ~/.claude.json and allowed its runner_list tool, runs a task whose
// mock model calls that tool: the call reaches runner (the list it gives
// back names a sim task dispatched before, which only runner knows) and
// the result reaches the model (the mock's next request carries it), which
// then ends the turn with its text. A second task's model calls
// runner_dispatch: a sim task is dispatched through runner mcp, and its
// record comes back to the model.
func TestRealAgentsMCPClient(t *testing.T) {
	const cli = "claude"
	turns := []mockapi.Turn{
		{Match: "MCP-LIST", Tool: &mockapi.ToolCall{Name: "runner_list"}, Text: "MCP-LISTED: the tasks are listed."},
		{Match: "MCP-DISPATCH", Text: "MCP-DISPATCHED: the sim has it.", Tool: &mockapi.ToolCall{Name: "runner_dispatch",
			Args: map[string]any{"agent": "sim", "task": "say dispatched through MCP"}}},
	}
	r := newRealRig(t, cli, turns, nil)
	turns[1].Tool.Args["project"] = r.project // the project is made with the rig (the mock shares the map)
	var sock string
	for _, kv := range r.env {
		if v, ok := strings.CutPrefix(kv, "RUNNER_TMUX_SOCKET="); ok {
			sock = v
		}
	}
	// Claude Code's user MCP servers are in ~/.claude.json; its tools are
	// allowed in ~/.claude/settings.json (else it asks before each call).
	cfgPath := filepath.Join(r.home, ".claude.json")
	var cfg map[string]any
	if b, err := os.ReadFile(cfgPath); err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("%s: %v", cfgPath, err)
	}
	cfg["mcpServers"] = map[string]any{"runner": map[string]any{
		"type": "stdio", "command": r.runner, "args": []string{"mcp"},
		"env": map[string]string{"RUNNER_STATE_DIR": r.stateDir, "RUNNER_TMUX_SOCKET": sock},
	}}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(r.home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"permissions": {"allow": ["mcp__runner__runner_list", "mcp__runner__runner_dispatch"]}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := r.run("dispatch", r.project, "--agent", "sim", "--timeout", "1m", "say sim task for the MCP list")
	if code != 0 {
		t.Fatalf("the sim task: exit %d\n%s%s", code, out, errOut)
	}
	simID := r.latestTask()

	out, errOut, code = r.run("dispatch", r.project, "--agent", cli, "--permissions", "default", "--timeout", "3m", "--ready-timeout", "90s",
		"--print-answer", "MCP-LIST: list runner's tasks with your runner tool")
	t.Logf("%s dispatch: exit %d\nstdout:\n%s\nstderr:\n%s", cli, code, out, errOut)
	id := r.latestTask()
	task := r.status(id)
	defer func() {
		if t.Failed() {
			logTask(t, task)
			for _, q := range r.srv.Requests() {
				t.Logf("mock: %s", q)
			}
		}
	}()
	if code != 0 || task.Status != state.StatusDone {
		t.Fatalf("exit %d, status %s; want 0, done", code, task.Status)
	}
	var called, returned bool
	for _, q := range r.srv.Requests() {
		if strings.HasPrefix(q.Reply, "tool: mcp__runner__runner_list") {
			called = true
		}
		if q.ToolResult && strings.Contains(q.ToolOutput, simID) && strings.Contains(q.ToolOutput, `"agent"`) {
			returned = true
			t.Logf("the tool result the model got (%d bytes): %.300s", len(q.ToolOutput), q.ToolOutput)
		}
	}
	if !called {
		t.Fatalf("the mock never called runner_list: did %s offer it? (tools of the requests in the log)", cli)
	}
	if !returned {
		t.Fatalf("no request carried runner_list's result naming the sim task %s back to the model", simID)
	}
	if !strings.Contains(task.Answer, "MCP-LISTED") {
		t.Errorf("the turn's answer %q, want the mock's text after the tool result", task.Answer)
	}

	// runner_dispatch: a sim task through runner mcp, its record back to
	// the model.
	out, errOut, code = r.run("dispatch", r.project, "--agent", cli, "--permissions", "default", "--timeout", "3m", "--ready-timeout", "90s",
		"--print-answer", "MCP-DISPATCH: give the sim a task with your runner tool")
	t.Logf("%s dispatch: exit %d\nstdout:\n%s\nstderr:\n%s", cli, code, out, errOut)
	if code != 0 || !strings.Contains(out, "MCP-DISPATCHED") {
		t.Fatalf("exit %d, answer %q; want 0 and the mock's text after the tool result", code, out)
	}
	list, _, _ := r.run("ps", "--all", "--json")
	var tasks []state.Task
	if err := json.Unmarshal([]byte(list), &tasks); err != nil {
		t.Fatal(err)
	}
	var viaMCP string
	for _, x := range tasks {
		if x.Agent == "sim" && x.Text == "say dispatched through MCP" {
			viaMCP = x.ID
		}
	}
	if viaMCP == "" {
		t.Fatalf("no sim task dispatched through runner mcp:\n%s", list)
	}
	returned = false
	for _, q := range r.srv.Requests() {
		if q.ToolResult && strings.Contains(q.ToolOutput, viaMCP) {
			returned = true
		}
	}
	if !returned {
		t.Errorf("runner_dispatch's record of %s never reached the model", viaMCP)
	}
	if _, errOut, code := r.run("wait", "--timeout", "1m", viaMCP); code != 0 {
		t.Errorf("the sim task dispatched through MCP: wait exit %d\n%s", code, errOut)
	}
}
