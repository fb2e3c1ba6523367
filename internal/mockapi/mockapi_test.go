package mockapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// post sends body to the mock and returns the status and the response body.
func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// sseData returns the JSON payloads of the data lines of an SSE stream.
func sseData(t *testing.T, stream string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stream))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || line == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad SSE data %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func testTurns(dir string) []Turn {
	return []Turn{
		{Match: "WRITE", Write: &FileWrite{Path: filepath.Join(dir, "a.txt"), Content: "x'y\n"}, Text: "wrote it"},
		{Match: "SHELL", Shell: "touch b.txt", Text: "ran it", Escalate: true},
		{Text: "hello there world"},
	}
}

func TestAnthropic(t *testing.T) {
	s := Start(testTurns("/p"), Options{})
	defer s.Close()
	url := s.URL() + "/v1/messages"
	tools := `"tools":[{"name":"Bash"},{"name":"Write"}]`

	// Streaming text, split into deltas that join to the answer.
	code, body := post(t, url, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}],`+tools+`}`)
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var text string
	var types []string
	for _, ev := range sseData(t, body) {
		types = append(types, ev["type"].(string))
		if d, ok := ev["delta"].(map[string]any); ok && d["type"] == "text_delta" {
			text += d["text"].(string)
		}
	}
	if text != "hello there world" {
		t.Errorf("streamed text %q, want %q", text, "hello there world")
	}
	want := "message_start ping content_block_start content_block_delta content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("event types\n got %s\nwant %s", got, want)
	}

	// A prompt matching a Write turn gets a Write tool call with its input.
	_, body = post(t, url, `{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"<ctx>"},{"type":"text","text":"do WRITE"}]}],`+tools+`}`)
	if !strings.Contains(body, `"name":"Write"`) || !strings.Contains(body, `"stop_reason":"tool_use"`) {
		t.Errorf("no Write tool call in:\n%s", body)
	}
	var input string
	for _, ev := range sseData(t, body) {
		if d, ok := ev["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			input += d["partial_json"].(string)
		}
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(input), &args); err != nil || args["file_path"] != "/p/a.txt" || args["content"] != "x'y\n" {
		t.Errorf("tool input %q (err %v), want file_path /p/a.txt and the content", input, err)
	}

	// The tool result gets the final text, not the call again.
	_, body = post(t, url, `{"model":"m","stream":false,"messages":[{"role":"user","content":"do WRITE"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}],`+tools+`}`)
	var msg struct {
		Content    []struct{ Type, Text string }
		StopReason string `json:"stop_reason"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil || len(msg.Content) != 1 || msg.Content[0].Text != "wrote it" || msg.StopReason != "end_turn" {
		t.Errorf("final answer %s (err %v), want text 'wrote it', end_turn", body, err)
	}

	// Text beside a tool result (a hook's additionalContext, as Claude
	// Code sends it) is context: the prompt before it picks the turn, and
	// the request's log keeps the context.
	_, body = post(t, url, `{"model":"m","stream":false,"messages":[{"role":"user","content":"do WRITE"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"text","text":"<system-reminder>a notice: SHELL</system-reminder>"}]}],`+tools+`}`)
	if err := json.Unmarshal([]byte(body), &msg); err != nil || len(msg.Content) != 1 || msg.Content[0].Text != "wrote it" {
		t.Errorf("final answer beside context %s (err %v), want text 'wrote it'", body, err)
	}
	reqs := s.Requests()
	if last := reqs[len(reqs)-1]; !last.ToolResult || last.Prompt != "do WRITE" || !strings.Contains(last.Context, "a notice: SHELL") {
		t.Errorf("logged request %+v: want the tool result, prompt 'do WRITE' and the notice as its context", last)
	}

	// Claude Code 2.1.332 sends the context as a system message after the
	// tool result: the conversation still ends with the tool result.
	_, body = post(t, url, `{"model":"m","stream":false,"messages":[{"role":"user","content":"do WRITE"},{"role":"system","content":"an environment"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]},
		{"role":"system","content":[{"type":"text","text":"PostToolUse:Bash hook additional context: a notice: SHELL"}]}],`+tools+`}`)
	if err := json.Unmarshal([]byte(body), &msg); err != nil || len(msg.Content) != 1 || msg.Content[0].Text != "wrote it" {
		t.Errorf("final answer before a system message %s (err %v), want text 'wrote it'", body, err)
	}
	reqs = s.Requests()
	if last := reqs[len(reqs)-1]; !last.ToolResult || last.Prompt != "do WRITE" || !strings.Contains(last.Context, "a notice: SHELL") || strings.Contains(last.Context, "an environment") {
		t.Errorf("logged request %+v: want the tool result, prompt 'do WRITE' and the notice (only) as its context", last)
	}

	// A side request (no tools) never gets a tool call.
	_, body = post(t, url, `{"model":"m","stream":false,"messages":[{"role":"user","content":"title for: do WRITE"}]}`)
	if strings.Contains(body, "tool_use") || !strings.Contains(body, "wrote it") {
		t.Errorf("side request answered %s, want the text only", body)
	}

	code, body = post(t, s.URL()+"/v1/messages/count_tokens", `{"messages":[]}`)
	if code != 200 || !strings.Contains(body, "input_tokens") {
		t.Errorf("count_tokens: %d %s", code, body)
	}
}

func TestResponses(t *testing.T) {
	s := Start(testTurns("/p"), Options{})
	defer s.Close()
	url := s.URL() + "/v1/responses"
	tools := `"tools":[{"type":"function","name":"exec_command"}]`

	_, body := post(t, url, `{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],`+tools+`}`)
	var text string
	var last string
	for _, ev := range sseData(t, body) {
		last = ev["type"].(string)
		if last == "response.output_text.delta" {
			text += ev["delta"].(string)
		}
	}
	if text != "hello there world" || last != "response.completed" {
		t.Errorf("text %q, last event %q; want the answer and response.completed", text, last)
	}

	// Only a shell tool is offered: a Write turn writes through it, and an
	// Escalate turn asks for unsandboxed execution.
	for _, tc := range []struct{ prompt, want string }{
		{"WRITE", `printf '%s' 'x'\\''y\n' \u003e '/p/a.txt'`},
		{"SHELL", `"sandbox_permissions":"require_escalated"`},
	} {
		_, body = post(t, url, `{"model":"m","stream":true,"input":[{"role":"user","content":"`+tc.prompt+`"}],`+tools+`}`)
		var args string
		for _, ev := range sseData(t, body) {
			if ev["type"] == "response.output_item.done" {
				item := ev["item"].(map[string]any)
				if item["type"] == "function_call" && item["name"] == "exec_command" {
					args = item["arguments"].(string)
				}
			}
		}
		if !strings.Contains(args, tc.want) {
			t.Errorf("%s: exec_command arguments %s, want them to contain %s", tc.prompt, args, tc.want)
		}
	}

	_, body = post(t, url, `{"model":"m","stream":false,"input":[{"role":"user","content":"SHELL"},
		{"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{}"},
		{"type":"function_call_output","call_id":"c1","output":"done"}],`+tools+`}`)
	if !strings.Contains(body, `"text":"ran it"`) {
		t.Errorf("after the tool output: %s, want the final text", body)
	}
}

func TestChatCompletions(t *testing.T) {
	s := Start(testTurns("/p"), Options{})
	defer s.Close()
	url := s.URL() + "/v1/chat/completions"
	tools := `"tools":[{"type":"function","function":{"name":"bash"}},{"type":"function","function":{"name":"write"}}]`

	_, body := post(t, url, `{"model":"m","stream":true,"messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"}],`+tools+`}`)
	if !strings.HasSuffix(strings.TrimSpace(body), "data: [DONE]") {
		t.Errorf("stream does not end with [DONE]:\n%s", body)
	}
	var text, finish string
	for _, ev := range sseData(t, body) {
		ch := ev["choices"].([]any)[0].(map[string]any)
		if c, ok := ch["delta"].(map[string]any)["content"].(string); ok {
			text += c
		}
		if f, ok := ch["finish_reason"].(string); ok {
			finish = f
		}
	}
	if text != "hello there world" || finish != "stop" {
		t.Errorf("text %q finish %q", text, finish)
	}

	_, body = post(t, url, `{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"WRITE"}]}],`+tools+`}`)
	if !strings.Contains(body, `"name":"write"`) || !strings.Contains(body, `\"filePath\":\"/p/a.txt\"`) || !strings.Contains(body, `"finish_reason":"tool_calls"`) {
		t.Errorf("no write tool call with filePath in:\n%s", body)
	}

	_, body = post(t, url, `{"model":"m","messages":[{"role":"user","content":"WRITE"},{"role":"assistant","tool_calls":[]},{"role":"tool","tool_call_id":"c","content":"ok"}],`+tools+`}`)
	if !strings.Contains(body, `"content":"wrote it"`) {
		t.Errorf("after the tool result: %s", body)
	}

	// A hook's context appended to the tool result (Qwen Code's
	// PostToolUse) is the request's context; the prompt still picks the
	// turn.
	_, body = post(t, url, `{"model":"m","messages":[{"role":"user","content":"WRITE"},{"role":"assistant","tool_calls":[]},
		{"role":"tool","tool_call_id":"c","content":"ok\n\na notice: SHELL"}],`+tools+`}`)
	reqs := s.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(body, `"content":"wrote it"`) || !last.ToolResult || last.Prompt != "WRITE" || !strings.Contains(last.Context, "a notice: SHELL") {
		t.Errorf("a tool result with a hook's context: %s; logged %+v", body, last)
	}
}

func TestGemini(t *testing.T) {
	s := Start(testTurns("/p"), Options{})
	defer s.Close()
	base := s.URL() + "/v1beta/models/gemini-x:"
	tools := `"tools":[{"functionDeclarations":[{"name":"run_shell_command"},{"name":"write_file"}]}]`

	_, body := post(t, base+"streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],`+tools+`}`)
	var text, finish string
	for _, ev := range sseData(t, body) {
		c := ev["candidates"].([]any)[0].(map[string]any)
		for _, p := range c["content"].(map[string]any)["parts"].([]any) {
			text += p.(map[string]any)["text"].(string)
		}
		if f, ok := c["finishReason"].(string); ok {
			finish = f
		}
	}
	if text != "hello there world" || finish != "STOP" {
		t.Errorf("text %q finish %q", text, finish)
	}

	_, body = post(t, base+"streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"SHELL"}]}],`+tools+`}`)
	if !strings.Contains(body, `"functionCall":{"args":{"command":"touch b.txt"`) || !strings.Contains(body, `"name":"run_shell_command"`) {
		t.Errorf("no run_shell_command call in:\n%s", body)
	}

	_, body = post(t, base+"generateContent", `{"contents":[{"role":"user","parts":[{"text":"SHELL"}]},
		{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{}}}]}],`+tools+`}`)
	if !strings.Contains(body, `"text":"ran it"`) {
		t.Errorf("after the function response: %s", body)
	}

	// Gemini CLI's AfterTool context, appended to the function's response
	// or as a text part beside it, is context, never the prompt.
	for _, part := range []string{`{"functionResponse":{"name":"run_shell_command","response":{"output":"ok\n\n<hook_context>a notice: WRITE</hook_context>"}}}`,
		`{"functionResponse":{"name":"run_shell_command","response":{"output":"ok"}}},{"text":"<hook_context>a notice: WRITE</hook_context>"}`} {
		_, body = post(t, base+"generateContent", `{"contents":[{"role":"user","parts":[{"text":"SHELL"}]},
		{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{}}}]},
		{"role":"user","parts":[`+part+`]}],`+tools+`}`)
		reqs := s.Requests()
		if last := reqs[len(reqs)-1]; !strings.Contains(body, `"text":"ran it"`) || !last.ToolResult || last.Prompt != "SHELL" || !strings.Contains(last.Context, "a notice: WRITE") {
			t.Errorf("a function response with a hook's context: %s; logged %+v", body, last)
		}
	}

	// Structured side requests get JSON that fits the schema.
	_, body = post(t, base+"generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],
		"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT",
		"properties":{"score":{"type":"INTEGER"},"why":{"type":"STRING"},"next_speaker":{"type":"STRING","enum":["model","user"]}}}}}`)
	var resp struct {
		Candidates []struct {
			Content struct{ Parts []struct{ Text string } }
		}
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Candidates) == 0 {
		t.Fatalf("bad response %s: %v", body, err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(resp.Candidates[0].Content.Parts[0].Text), &obj); err != nil {
		t.Fatalf("structured answer is not JSON: %s", body)
	}
	if obj["score"] != 1.0 || obj["why"] != "hello there world" || obj["next_speaker"] != "user" {
		t.Errorf("structured answer %v", obj)
	}

	code, body := post(t, base+"countTokens", `{"contents":[]}`)
	if code != 200 || !strings.Contains(body, "totalTokens") {
		t.Errorf("countTokens: %d %s", code, body)
	}
}

func TestSchemaExample(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"string"}`, `"T"`},
		{`{"type":"integer"}`, `1`},
		{`{"type":"NUMBER"}`, `1`},
		{`{"type":"boolean"}`, `false`},
		{`{"type":"array","items":{"type":"string"}}`, `[]`},
		{`{"enum":["a","b"]}`, `"a"`},
		{`{"type":"string","enum":["model","user"]}`, `"user"`},
		{`{"type":["null","string"]}`, `null`},
		{`{"properties":{"a":{"type":"object","properties":{"b":{"type":"integer"}}}}}`, `{"a":{"b":1}}`},
	} {
		if got := schemaText(json.RawMessage(tc.schema), "T"); got != tc.want {
			t.Errorf("schemaText(%s) = %s, want %s", tc.schema, got, tc.want)
		}
	}
	if got := schemaText(nil, "T"); got != "" {
		t.Errorf("schemaText(nil) = %q, want empty", got)
	}
}

func TestDecide(t *testing.T) {
	s := &Server{turns: testTurns("/p")}
	for _, tc := range []struct {
		name string
		c    conv
		want string
	}{
		{"default turn", conv{prompt: "anything", tools: []string{"Write"}}, "text: hello there world"},
		{"write with Write", conv{prompt: "WRITE", tools: []string{"Bash", "Write"}}, `tool: Write {"content":"x'y\n","file_path":"/p/a.txt"}`},
		{"write with write_file", conv{prompt: "WRITE", tools: []string{"write_file"}}, `tool: write_file {"content":"x'y\n","file_path":"/p/a.txt"}`},
		{"write with apply_patch", conv{prompt: "WRITE", tools: []string{"apply_patch"}}, "tool: apply_patch *** Begin Patch *** Add File: /p/a.txt +x'y *** End Patch"},
		{"write via bash", conv{prompt: "WRITE", tools: []string{"bash"}}, `tool: bash {"command":"printf '%s' 'x'\\''y\n' \u003e '/p/a.txt'","description":"Run the re…`},
		{"shell with shell array", conv{prompt: "SHELL", tools: []string{"shell"}}, `tool: shell {"command":["bash","-lc","touch b.txt"]}`},
		{"no matching tool", conv{prompt: "SHELL", tools: []string{"Read"}}, "text: ran it"},
		{"side request", conv{prompt: "SHELL"}, "text: ran it"},
		{"tool result", conv{prompt: "WRITE", tools: []string{"Write"}, toolResult: true}, "text: wrote it"},
	} {
		if got := s.decide(tc.c).String(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	empty := &Server{}
	if got := empty.decide(conv{prompt: "x"}).String(); got != "text: "+DefaultText {
		t.Errorf("no turns: %s", got)
	}
}

func TestRequestLogAndUnknownPath(t *testing.T) {
	var log bytes.Buffer
	s := Start(testTurns("/p"), Options{Log: &log})
	defer s.Close()
	code, body := post(t, s.URL()+"/v2/whatever", `{"x":1}`)
	if code != 404 || !strings.Contains(body, "/v2/whatever") {
		t.Errorf("unknown path: %d %s", code, body)
	}
	code, body = post(t, s.URL()+"/v1/messages", `not json`)
	if code != 400 || !strings.Contains(body, "messages request") {
		t.Errorf("bad body: %d %s", code, body)
	}
	post(t, s.URL()+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"please SHELL"}],"tools":[{"name":"Bash"}]}`)
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests logged, want 3: %v", len(reqs), reqs)
	}
	last := reqs[2]
	if last.API != "anthropic" || last.Model != "m" || last.Prompt != "please SHELL" || len(last.Tools) != 1 || !strings.HasPrefix(last.Reply, "tool: Bash") {
		t.Errorf("last request logged as %+v", last)
	}
	if n := strings.Count(log.String(), "\n"); n != 3 || !strings.Contains(log.String(), "POST /v2/whatever api=unknown") {
		t.Errorf("log has %d lines:\n%s", n, log.String())
	}
}

func TestDelayIsCancelledWithTheRequest(t *testing.T) {
	s := Start([]Turn{{Text: "late", Delay: time.Hour}}, Options{})
	defer s.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/messages",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"Bash"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	// Wait until the mock holds the request, then give up on it.
	deadline := clock.Now().Add(10 * time.Second)
	for len(s.Requests()) == 0 && clock.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("request with an hour's delay returned without error after cancel")
	}
	s.Close() // must not hang on the delayed handler
}

func TestAgentEnv(t *testing.T) {
	home, proj := "/h", "/w/proj"
	for _, tc := range []struct {
		cli      string
		env      []string
		file     string
		contains []string
	}{
		{"claude", []string{"ANTHROPIC_BASE_URL=http://x:1", "ANTHROPIC_API_KEY=" + MockAPIKey, "DISABLE_AUTOUPDATER=1"},
			"/h/.claude.json", []string{`"hasCompletedOnboarding": true`, `"0123456789abcdefghij"`, `"/w/proj": {`, `"hasTrustDialogAccepted": true`}},
		{"codex", []string{"CODEX_HOME=/h/.codex", "RUNNER_MOCK_API_KEY=" + MockAPIKey},
			"/h/.codex/config.toml", []string{`model_provider = "mock"`, `base_url = "http://x:1/v1"`, `wire_api = "responses"`, `[projects."/w/proj"]`, `trust_level = "trusted"`}},
		{"gemini", []string{"GEMINI_API_KEY=" + MockAPIKey, "GOOGLE_GEMINI_BASE_URL=http://x:1"},
			"/h/.gemini/settings.json", []string{`"selectedType": "gemini-api-key"`}},
		{"gemini", nil, "/h/.gemini/trustedFolders.json", []string{`"/w/proj": "TRUST_FOLDER"`}},
		{"qwen", []string{"OPENAI_BASE_URL=http://x:1/v1", "OPENAI_API_KEY=" + MockAPIKey, "OPENAI_MODEL=" + MockModel},
			"/h/.qwen/settings.json", []string{`"selectedType": "openai"`, `"enableAutoUpdate": false`}},
		{"opencode", []string{"OPENCODE_MODELS_URL=http://x:1", "XDG_CONFIG_HOME=/h/.config"},
			"/h/.config/opencode/opencode.json", []string{`"model": "mock/mock-model"`, `"baseURL": "http://x:1/v1"`, `"edit": "ask"`}},
	} {
		env, files, err := AgentEnv(tc.cli, "http://x:1/", home, proj)
		if err != nil {
			t.Fatalf("%s: %v", tc.cli, err)
		}
		if env[0] != "HOME=/h" {
			t.Errorf("%s: env starts with %q, want HOME=/h", tc.cli, env[0])
		}
		for _, e := range tc.env {
			if !contains(env, e) {
				t.Errorf("%s: env %v lacks %s", tc.cli, env, e)
			}
		}
		content, ok := files[tc.file]
		if !ok {
			t.Errorf("%s: no file %s in %v", tc.cli, tc.file, sortedKeys(files))
			continue
		}
		for _, c := range tc.contains {
			if !strings.Contains(content, c) {
				t.Errorf("%s: %s lacks %s:\n%s", tc.cli, tc.file, c, content)
			}
		}
		if strings.HasSuffix(tc.file, ".json") && !json.Valid([]byte(content)) {
			t.Errorf("%s: %s is not valid JSON:\n%s", tc.cli, tc.file, content)
		}
	}
	// Without projects, no folder is trusted: the CLI asks, as in a
	// folder it has never seen.
	for _, cli := range CLIs() {
		_, files, err := AgentEnv(cli, "http://x:1/", home)
		if err != nil {
			t.Fatalf("%s: %v", cli, err)
		}
		for path, content := range files {
			if strings.Contains(path, "trustedFolders") || strings.Contains(content, "hasTrustDialogAccepted") ||
				strings.Contains(content, "trust_level") || strings.Contains(content, proj) {
				t.Errorf("%s without projects seeds folder trust in %s:\n%s", cli, path, content)
			}
		}
	}
	for _, bad := range []struct{ cli, url, home, proj string }{
		{"aider", "http://x", "/h", "/p"},
		{"claude", "x:1", "/h", "/p"},
		{"claude", "http://x", "rel", "/p"},
		{"claude", "http://x", "/h", "rel"},
	} {
		if _, _, err := AgentEnv(bad.cli, bad.url, bad.home, bad.proj); err == nil {
			t.Errorf("AgentEnv(%q, %q, %q, %q) gave no error", bad.cli, bad.url, bad.home, bad.proj)
		}
	}
}

func TestWriteFiles(t *testing.T) {
	home := t.TempDir()
	_, files, err := AgentEnv("gemini", "http://127.0.0.1:1", home, "/p")
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", path, got, err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", path, fi.Mode(), err)
		}
	}
	blocker := filepath.Join(home, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(map[string]string{filepath.Join(blocker, "x"): "y"}); err == nil {
		t.Error("WriteFiles under a regular file gave no error")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestConcurrentRequestsShareTheLog(t *testing.T) {
	var log bytes.Buffer // not safe for concurrent use: the Server must serialise
	s := Start(testTurns("/p"), Options{Log: &log})
	defer s.Close()
	const n = 20
	errs := make(chan error, n)
	for range n {
		go func() {
			resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := len(s.Requests()); got != n {
		t.Errorf("%d requests recorded, want %d", got, n)
	}
	if got := strings.Count(log.String(), "mockapi: POST /v1/chat/completions"); got != n {
		t.Errorf("%d log lines, want %d:\n%s", got, n, log.String())
	}
}

// TestHomeOutsideTemp: an agent's home is never under the temporary
// directory (Codex makes no sandbox helper there), and is removed with the
// test.
func TestHomeOutsideTemp(t *testing.T) {
	var dir string
	t.Run("home", func(t *testing.T) {
		dir = Home(t)
		if underTemp(dir) {
			t.Fatalf("home %s is under the temporary directory", dir)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Fatalf("home %s: %v", dir, err)
		}
	})
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("home %s left after the test", dir)
	}
}

// TestReply: a turn's Reply makes its answer from the prompt.
func TestReply(t *testing.T) {
	s := Start([]Turn{{Match: "VOTE", Reply: func(p string) string { return "you said " + strings.Fields(p)[1] }}}, Options{})
	defer s.Close()
	_, body := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"VOTE t_abc"}]}`)
	if !strings.Contains(body, `"content":"you said t_abc"`) {
		t.Errorf("a reply from the prompt: %s", body)
	}
}

// TestToolText: a turn's ToolText comes with its tool call, before it in
// the same model response, in every API's shape (streamed and whole); the
// tool's result then gets the turn's Text alone.
func TestToolText(t *testing.T) {
	const lead = "I'll create the file."
	s := Start([]Turn{{Match: "LEAD", Shell: "touch c.txt", ToolText: lead, Text: "Created c.txt."}}, Options{})
	defer s.Close()
	u := s.URL()
	for _, tc := range []struct {
		name, url, body, call string
	}{
		{"anthropic stream", u + "/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":"LEAD"}],"tools":[{"name":"Bash"}]}`, `"name":"Bash"`},
		{"anthropic", u + "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"LEAD"}],"tools":[{"name":"Bash"}]}`, `"name":"Bash"`},
		{"responses stream", u + "/v1/responses", `{"model":"m","stream":true,"input":[{"role":"user","content":"LEAD"}],"tools":[{"type":"function","name":"exec_command"}]}`, `"name":"exec_command"`},
		{"responses", u + "/v1/responses", `{"model":"m","input":[{"role":"user","content":"LEAD"}],"tools":[{"type":"function","name":"exec_command"}]}`, `"name":"exec_command"`},
		{"chat stream", u + "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"LEAD"}],"tools":[{"type":"function","function":{"name":"bash"}}]}`, `"name":"bash"`},
		{"chat", u + "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"LEAD"}],"tools":[{"type":"function","function":{"name":"bash"}}]}`, `"name":"bash"`},
		{"gemini stream", u + "/v1beta/models/g:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"LEAD"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`, `"name":"run_shell_command"`},
		{"gemini", u + "/v1beta/models/g:generateContent", `{"contents":[{"role":"user","parts":[{"text":"LEAD"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`, `"name":"run_shell_command"`},
	} {
		code, body := post(t, tc.url, tc.body)
		// The text may come in chunks ("I'll ", "create ", …): its last word
		// stands before the call.
		text, call := strings.Index(body, "file."), strings.Index(body, tc.call)
		if code != 200 || !strings.Contains(body, "I'll") || text < 0 || call < 0 || text > call {
			t.Errorf("%s: status %d, want %q before the call %s in:\n%s", tc.name, code, lead, tc.call, body)
		}
		if strings.Contains(body, "Created c.txt.") {
			t.Errorf("%s: the answer after the tool came with its call:\n%s", tc.name, body)
		}
	}
	_, body := post(t, u+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"LEAD"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}],"tools":[{"name":"Bash"}]}`)
	if !strings.Contains(body, `"text":"Created c.txt."`) || strings.Contains(body, "I'll") {
		t.Errorf("after the tool: %s, want the answer alone", body)
	}
}

// TestDecideDeferredTool: Claude Code 2.1.2xx and later offer an MCP
// server's tools only after the model searched for them (ToolSearch): the
// mock searches, calls the tool once the search's result is back, and
// answers once the tool's own result is; a CLI that offers the tool at
// once gets the call at once.
func TestDecideDeferredTool(t *testing.T) {
	s := &Server{turns: []Turn{{Match: "MCP-LIST", Tool: &ToolCall{Name: "runner_list"}, Text: "listed"}}}
	full := []string{"Bash", toolSearch, "mcp__runner__runner_list"}
	for _, tc := range []struct {
		name string
		c    conv
		want string
	}{
		{"deferred: search", conv{prompt: "MCP-LIST", tools: []string{"Bash", toolSearch}}, `tool: ToolSearch {"max_results":5,"query":"runner_list"}`},
		{"found: call", conv{prompt: "MCP-LIST", tools: full, toolResult: true, calledTools: []string{toolSearch}}, "tool: mcp__runner__runner_list {}"},
		{"called: answer", conv{prompt: "MCP-LIST", tools: full, toolResult: true, calledTools: []string{"mcp__runner__runner_list"}}, "text: listed"},
		{"offered at once", conv{prompt: "MCP-LIST", tools: []string{"runner__runner_list"}}, "tool: runner__runner_list {}"},
		{"neither offered", conv{prompt: "MCP-LIST", tools: []string{"Bash"}}, "text: listed"},
		{"not found by the search", conv{prompt: "MCP-LIST", tools: []string{toolSearch}, toolResult: true, calledTools: []string{toolSearch}}, "text: listed"},
	} {
		if got := s.decide(tc.c).String(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestAnthropicCalledTools: the tools of the latest assistant answer are
// read from the conversation, not an earlier one's.
func TestAnthropicCalledTools(t *testing.T) {
	var req anthropicRequest
	body := `{"model":"m","messages":[
		{"role":"user","content":"MCP-LIST"},
		{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Old","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]},
		{"role":"assistant","content":[{"type":"text","text":"searching"},{"type":"tool_use","id":"b","name":"ToolSearch","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"b","content":[{"type":"tool_reference","tool_name":"mcp__runner__runner_list"}]}]}]}`
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	if c := req.conv(); !slices.Equal(c.calledTools, []string{toolSearch}) || !c.toolResult || strings.TrimSpace(c.prompt) != "MCP-LIST" {
		t.Errorf("conv: called %v, tool result %v, prompt %q", c.calledTools, c.toolResult, c.prompt)
	}
}
