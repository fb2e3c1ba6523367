package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// fakeRunner records each run and answers with reply.
type fakeRunner struct {
	mu    sync.Mutex
	runs  [][]string
	stdin []string
	reply func(ctx context.Context, argv []string, stdout io.Writer) Result
}

func (f *fakeRunner) exec(ctx context.Context, argv []string, stdin string, stdout io.Writer) Result {
	f.mu.Lock()
	f.runs = append(f.runs, argv)
	f.stdin = append(f.stdin, stdin)
	f.mu.Unlock()
	if f.reply == nil {
		fmt.Fprintln(stdout, `{"ok": true}`)
		return Result{}
	}
	return f.reply(ctx, argv, stdout)
}

func (f *fakeRunner) last() ([]string, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[len(f.runs)-1], f.stdin[len(f.stdin)-1]
}

// connect serves opts over an in-memory transport and returns a client
// session of the SDK's own client.
func connect(t *testing.T, opts Options) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(opts).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}

// TestToolsListed: the eight tools, each with an object schema whose
// properties are named after the CLI's arguments, the required ones
// required.
func TestToolsListed(t *testing.T) {
	cs := connect(t, Options{Exec: (&fakeRunner{}).exec})
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2][]string{ // properties, required
		"runner_dispatch": {{"project", "task", "agent", "model", "after", "worktree", "timeout", "permissions", "approve_rule", "sandbox", "budget_usd", "max_turns"}, {"project", "task"}},
		"runner_list":     {{"project"}, nil},
		"runner_status":   {{"id"}, {"id"}},
		"runner_wait":     {{"id", "timeout", "input"}, {"id"}},
		"runner_send":     {{"id", "text"}, {"id", "text"}},
		"runner_answer":   {{"id", "option", "digest", "op"}, {"id", "option", "digest"}},
		"runner_cancel":   {{"id"}, {"id"}},
		"runner_events":   {{"after", "limit", "task", "project"}, nil},
	}
	got := map[string]bool{}
	for _, tool := range res.Tools {
		got[tool.Name] = true
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		if tool.Description == "" {
			t.Errorf("%s: no description", tool.Name)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(b, &schema); err != nil || schema.Type != "object" {
			t.Fatalf("%s: schema %s: %v", tool.Name, b, err)
		}
		for _, p := range w[0] {
			if _, ok := schema.Properties[p]; !ok {
				t.Errorf("%s: no property %q in %s", tool.Name, p, b)
			}
		}
		slices.Sort(schema.Required)
		req := slices.Clone(w[1])
		slices.Sort(req)
		if !slices.Equal(schema.Required, req) {
			t.Errorf("%s: required %v, want %v", tool.Name, schema.Required, req)
		}
	}
	for name := range want {
		if !got[name] {
			t.Errorf("tool %s not listed", name)
		}
	}
}

// TestToolsArgv: each tool runs runner with the CLI's argv, positional
// arguments after "--" (an id or project that starts with '-' is not a
// flag), texts on standard input.
func TestToolsArgv(t *testing.T) {
	f := &fakeRunner{}
	cs := connect(t, Options{Exec: f.exec})
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		argv  string
		stdin string
	}{
		{"runner_dispatch", map[string]any{"project": "api", "task": "--help me\nplease", "agent": "sim"},
			"dispatch --detach --json --file - --agent sim -- api", "--help me\nplease"},
		{"runner_dispatch", map[string]any{"project": "/src/x", "task": "t", "model": "sonnet", "after": []string{"t_a", "t_b"},
			"worktree": true, "commit": true, "commit_branch": true, "exclusive": true, "timeout": "30m", "permissions": "auto",
			"approve_rule": []string{"^ls"}, "yes_trust": true, "sandbox": true, "budget_tokens": 1000, "budget_usd": 2.5,
			"max_turns": 3, "on_limit": "wait", "awareness": "off", "host": "box", "require_snapshot": true, "from": "t_a"},
			"dispatch --detach --json --file - --model sonnet --after t_a --after t_b --worktree --from t_a --commit --commit-branch " +
				"--exclusive --timeout 30m --permissions auto --approve-rule ^ls --yes-trust --sandbox --budget-tokens 1000 " +
				"--budget-usd 2.5 --max-turns 3 --on-limit wait --awareness off --host box --require-snapshot -- /src/x", "t"},
		{"runner_list", nil, "ps --json --all", ""},
		{"runner_list", map[string]any{"project": "api", "active": true}, "ps --json --project api", ""},
		{"runner_status", map[string]any{"id": "-x"}, "status --json -- -x", ""},
		{"runner_cancel", map[string]any{"id": "t_a"}, "cancel --json -- t_a", ""},
		{"runner_wait", map[string]any{"id": "t_a"}, "wait --json --timeout 1m0s -- t_a", ""},
		{"runner_wait", map[string]any{"id": "t_a", "timeout": "90s", "input": true}, "wait --json --timeout 1m30s --input -- t_a", ""},
		{"runner_wait", map[string]any{"id": "t_a", "timeout": "24h"}, "wait --json --timeout 10m0s -- t_a", ""},
		{"runner_send", map[string]any{"id": "t_a", "text": "and tests"}, "send --detach --json --file - -- t_a", "and tests"},
		{"runner_answer", map[string]any{"id": "t_a", "option": "2", "digest": "d1", "op": "op7"},
			"answer --digest d1 --op op7 --by mcp --json -- t_a 2", ""},
	} {
		res := call(t, cs, tc.tool, tc.args)
		if res.IsError {
			t.Errorf("%s %v: error %s", tc.tool, tc.args, text(res))
			continue
		}
		argv, stdin := f.last()
		if got := strings.Join(argv, " "); got != tc.argv || stdin != tc.stdin {
			t.Errorf("%s %v:\n got %q stdin %q\nwant %q stdin %q", tc.tool, tc.args, got, stdin, tc.argv, tc.stdin)
		}
		if res.StructuredContent == nil || !strings.Contains(text(res), `"ok": true`) {
			t.Errorf("%s: result %s, %v; want runner's JSON", tc.tool, text(res), res.StructuredContent)
		}
	}
	// An answer given no op gets a new one each time.
	call(t, cs, "runner_answer", map[string]any{"id": "t_a", "option": "1", "digest": "d"})
	a1, _ := f.last()
	call(t, cs, "runner_answer", map[string]any{"id": "t_a", "option": "1", "digest": "d"})
	a2, _ := f.last()
	if a1[4] == a2[4] || !strings.HasPrefix(a1[4], "mcp-") {
		t.Errorf("ops %q and %q: want two new ones", a1[4], a2[4])
	}
}

// TestToolErrors: runner's non-zero exit is a tool error with its stderr
// and the code's meaning (stdout kept beside it); arguments runner would
// never get (a missing one, a bad duration) are tool errors without a run.
func TestToolErrors(t *testing.T) {
	f := &fakeRunner{reply: func(_ context.Context, argv []string, stdout io.Writer) Result {
		if argv[0] == "wait" {
			fmt.Fprintln(stdout, `[{"id": "t_a", "status": "failed"}]`)
			return Result{Code: 1, Stderr: "t_a failed: the agent exited\n"}
		}
		return Result{Code: 2, Stderr: `{"error":"no task matches \"t_nope\"","exit_code":2}`}
	}}
	cs := connect(t, Options{Exec: f.exec, Meaning: func(code int) string { return map[int]string{2: "usage or bad input"}[code] }})
	res := call(t, cs, "runner_status", map[string]any{"id": "t_nope"})
	if !res.IsError || !strings.Contains(text(res), "runner exited 2 (usage or bad input)") || !strings.Contains(text(res), "no task matches") {
		t.Errorf("unknown task: %v %q", res.IsError, text(res))
	}
	res = call(t, cs, "runner_wait", map[string]any{"id": "t_a"})
	if !res.IsError || !strings.Contains(text(res), "the agent exited") || !strings.Contains(text(res), `"status": "failed"`) {
		t.Errorf("failed task: %v %q", res.IsError, text(res))
	}
	runs := len(f.runs)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"runner_dispatch", map[string]any{"project": "api"}},
		{"runner_dispatch", map[string]any{"project": "api", "task": "x", "timeout": "soon"}},
		{"runner_dispatch", map[string]any{"project": "api", "task": "x", "bogus": 1}},
		{"runner_wait", map[string]any{"id": "t_a", "timeout": "-1s"}},
		{"runner_wait", map[string]any{}},
		{"runner_send", map[string]any{"id": "t_a", "text": ""}},
		{"runner_events", map[string]any{"after": -1}},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err == nil && !res.IsError {
			t.Errorf("%s %v: accepted", tc.tool, tc.args)
		}
	}
	if len(f.runs) != runs {
		t.Errorf("bad arguments ran runner: %v", f.runs[runs:])
	}
}

// TestEventsPage: runner_events returns at most limit events and the
// cursor after them, and stops runner once the page is full, however
// long the stream (here 250 events).
func TestEventsPage(t *testing.T) {
	stopped := make(chan bool, 1)
	f := &fakeRunner{reply: func(ctx context.Context, argv []string, stdout io.Writer) Result {
		from := uint64(0)
		if i := slices.Index(argv, "--after"); i >= 0 {
			fmt.Sscan(argv[i+1], &from)
		}
		for c := from + 1; c <= 250; c++ {
			if ctx.Err() != nil {
				stopped <- true
				return Result{Err: ctx.Err()}
			}
			// Lines split across writes, as a pipe may give them.
			line := fmt.Sprintf(`{"cursor":%d,"type":"status","task":"t_a"}`+"\n", c)
			stdout.Write([]byte(line[:10]))
			stdout.Write([]byte(line[10:]))
		}
		return Result{}
	}}
	cs := connect(t, Options{Exec: f.exec})
	page := func(args map[string]any) EventsPage {
		t.Helper()
		res := call(t, cs, "runner_events", args)
		if res.IsError {
			t.Fatalf("events %v: %s", args, text(res))
		}
		var p EventsPage
		if err := json.Unmarshal([]byte(text(res)), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := page(nil)
	if len(p.Events) != DefaultEvents || p.Next != 100 || !p.More {
		t.Fatalf("first page: %d events, next %d, more %v", len(p.Events), p.Next, p.More)
	}
	if !<-stopped {
		t.Fatal("runner not stopped")
	}
	p = page(map[string]any{"after": p.Next, "limit": 5000, "task": "t_a"})
	if len(p.Events) != 150 || p.Next != 250 || p.More {
		t.Fatalf("last page: %d events, next %d, more %v", len(p.Events), p.Next, p.More)
	}
	if argv, _ := f.last(); strings.Join(argv, " ") != "events --json --after 100 --task t_a" {
		t.Errorf("argv %q", argv)
	}
	p = page(map[string]any{"after": 250, "limit": 3})
	if len(p.Events) != 0 || p.Next != 250 || p.More {
		t.Fatalf("past the end: %d events, next %d, more %v", len(p.Events), p.Next, p.More)
	}
}

// TestHTTPHandler: the SDK's streamable HTTP client reaches the tools
// through HTTPHandler.
func TestHTTPHandler(t *testing.T) {
	f := &fakeRunner{}
	srv := httptest.NewServer(HTTPHandler(Options{Exec: f.exec}))
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(res.Tools) != 8 {
		t.Fatalf("tools over HTTP: %v, %v", res, err)
	}
	if r := call(t, cs, "runner_list", nil); r.IsError {
		t.Fatalf("runner_list over HTTP: %s", text(r))
	}
	if argv, _ := f.last(); strings.Join(argv, " ") != "ps --json --all" {
		t.Errorf("argv %q", argv)
	}
}
