package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/runner-cli/runner/runner/door"
)

// mcpEnv is the environment of a runner with a HOME, state and tmux
// server of its own (on a short socket path), the test binary as runner
// first on PATH.
func mcpEnv(t *testing.T) (env []string, runnerBin string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	bin := selfAsRunner(t)
	home := t.TempDir()
	sockDir, err := os.MkdirTemp("/tmp", "rmcp")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "s")
	t.Cleanup(func() {
		exec.Command("tmux", "-S", sock, "kill-server").Run()
		os.RemoveAll(sockDir)
	})
	env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local/state"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"RUNNER_TMUX_SOCKET="+sock, "TERM=xterm-256color", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	return env, filepath.Join(bin, "runner")
}

// mcpCall calls a tool and decodes the JSON runner printed (for a tool
// error, the error's text).
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, into any) (isError bool, text string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	text = strings.Join(parts, "\n")
	if !res.IsError && into != nil {
		if err := json.Unmarshal([]byte(text), into); err != nil {
			t.Fatalf("%s: %v in %q", name, err, text)
		}
	}
	return res.IsError, text
}

type mcpTask struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Answer string `json:"answer"`
}

// TestMCP: the SDK's own client starts `runner mcp` (stdio) and drives a
// real runner through it: the tools and their schemas are listed, a sim
// task is dispatched (detached: its record at once), waited on, looked
// at, listed; another is cancelled while it works, and a wait that gives
// up before it ends is a tool error that leaves the task at work; an
// unknown task is a tool error with runner's message; the event stream
// comes in pages.
func TestMCP(t *testing.T) {
	t.Parallel() // alongside the scripts: it waits more than it computes
	env, bin := mcpEnv(t)
	proj := t.TempDir()
	cmd := exec.Command(bin, "mcp")
	cmd.Env, cmd.Dir, cmd.Stderr = env, proj, os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Name == "runner_dispatch" {
			b, _ := json.Marshal(tool.InputSchema)
			for _, p := range []string{`"project"`, `"task"`, `"agent"`, `"required":["project","task"]`} {
				if !strings.Contains(string(b), p) {
					t.Errorf("runner_dispatch's schema lacks %s: %s", p, b)
				}
			}
		}
	}
	if got := strings.Join(names, " "); got != "runner_answer runner_cancel runner_dispatch runner_events runner_list runner_send runner_status runner_wait" {
		t.Errorf("tools: %s", got)
	}

	dispatch := func(text string) mcpTask {
		t.Helper()
		var task mcpTask
		if isErr, out := mcpCall(t, cs, "runner_dispatch", map[string]any{"project": proj, "task": text, "agent": "sim",
			"awareness": "off"}, &task); isErr || !strings.HasPrefix(task.ID, "t_") {
			t.Fatalf("dispatch: %s", out)
		}
		return task
	}
	done := dispatch("say hello from mcp")
	var waited []mcpTask
	if isErr, out := mcpCall(t, cs, "runner_wait", map[string]any{"id": done.ID, "timeout": "60s"}, &waited); isErr ||
		len(waited) != 1 || waited[0].Status != "done" || !strings.Contains(waited[0].Answer, "hello from mcp") {
		t.Fatalf("wait: %s", out)
	}
	var status mcpTask
	if isErr, out := mcpCall(t, cs, "runner_status", map[string]any{"id": done.ID}, &status); isErr || status.Status != "done" {
		t.Fatalf("status: %s", out)
	}

	busy := dispatch("sleep 60s")
	if isErr, out := mcpCall(t, cs, "runner_wait", map[string]any{"id": busy.ID, "timeout": "1s"}, nil); !isErr ||
		!strings.Contains(out, "exited 3 (timeout)") {
		t.Errorf("a wait that gives up: %v %s", isErr, out)
	}
	var list []mcpTask
	mcpCall(t, cs, "runner_list", nil, &list)
	seen := map[string]string{}
	for _, task := range list {
		seen[task.ID] = task.Status
	}
	if seen[done.ID] != "done" || seen[busy.ID] == "" || len(list) != 2 {
		t.Errorf("list: %+v", list)
	}
	if isErr, out := mcpCall(t, cs, "runner_cancel", map[string]any{"id": busy.ID}, nil); isErr || !strings.Contains(out, "cancelled") {
		t.Errorf("cancel: %s", out)
	}
	if isErr, out := mcpCall(t, cs, "runner_status", map[string]any{"id": busy.ID}, &status); isErr || status.Status != "cancelled" {
		t.Errorf("status after cancel: %s", out)
	}

	if isErr, out := mcpCall(t, cs, "runner_status", map[string]any{"id": "t_nosuchtask"}, nil); !isErr ||
		!strings.Contains(out, "no task matches") || !strings.Contains(out, "exited 2") {
		t.Errorf("unknown task: %v %s", isErr, out)
	}

	var page struct {
		Events []struct {
			Cursor uint64 `json:"cursor"`
		} `json:"events"`
		Next uint64 `json:"next"`
		More bool   `json:"more"`
	}
	mcpCall(t, cs, "runner_events", map[string]any{"limit": 2}, &page)
	if len(page.Events) != 2 || !page.More || page.Next != page.Events[1].Cursor {
		t.Fatalf("events page: %+v", page)
	}
	first := page.Next
	mcpCall(t, cs, "runner_events", map[string]any{"after": first, "limit": 1000}, &page)
	if len(page.Events) == 0 || page.Events[0].Cursor <= first || page.More {
		t.Errorf("next events page: %+v", page)
	}
}

// TestMCPAnswer: runner_answer runs runner answer with the digest, op and
// --by mcp; a stale digest presses nothing (an error).
func TestMCPAnswer(t *testing.T) {
	a, _ := newApp(strings.NewReader(""), os.Stdout, os.Stderr, func(string) string { return "" })
	if c, _, err := a.newRootCmd().Find([]string{"answer"}); err != nil || c.Name() != "answer" {
		t.Skip("runner answer has not landed yet")
	}
	env, bin := mcpEnv(t)
	cmd := exec.Command(bin, "mcp")
	cmd.Env, cmd.Dir, cmd.Stderr = env, t.TempDir(), os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if isErr, out := mcpCall(t, cs, "runner_answer", map[string]any{"id": "t_nosuchtask", "option": "1", "digest": "x"}, nil); !isErr ||
		strings.Contains(out, "unknown command") {
		t.Errorf("answer to no task: %v %s", isErr, out)
	}
}

// TestMCPNotThroughDoor: a sandboxed task reaches no MCP server: its door
// does not carry runner mcp (nor serve), and a request that came through
// a door is refused runner mcp before it serves anything.
func TestMCPNotThroughDoor(t *testing.T) {
	for _, args := range [][]string{{"mcp"}, {"serve"}} {
		if door.Carried(args) {
			t.Errorf("the door carries runner %s", args[0])
		}
		if _, err := door.ParseRequest(strings.NewReader(`{"args":["` + args[0] + `"]}` + "\n")); err == nil {
			t.Errorf("the door takes a request for runner %s", args[0])
		}
	}
	code, out, errOut := runCLIEnv(t, confinedEnv(t, t.TempDir()), "mcp")
	if code != 2 || !strings.Contains(errOut, "not open to a sandboxed task") || out != "" {
		t.Errorf("runner mcp through a door: exit %d, %q %q; want exit 2, refused", code, out, errOut)
	}
	// Inside a sandbox (RUNNER_DOOR set), runner mcp goes to the door, which refuses it.
	if throughDoor([]string{"mcp"}) != true {
		t.Errorf("runner mcp in a sandbox is not sent to the door")
	}
}
