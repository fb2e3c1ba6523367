package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// runCLI runs the CLI in-process with in-memory streams.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	a, _ := newApp(strings.NewReader(stdin), &out, &errOut, os.Getenv)
	code = a.run(context.Background(), args)
	return code, out.String(), errOut.String()
}

const simAsk = "../../runner/profile/testdata/screens/sim__needs_input__1.txt"

func TestAgentsDetectText(t *testing.T) {
	code, out, errOut := runCLI(t, "", "agents", "detect", "--file", simAsk, "--agent", "sim")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"needs_input\n", `decided by: needs_input "^❯ 1\\. Yes"`, "question:", "    Create hello.txt?"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestAgentsDetectJSONAndStdin(t *testing.T) {
	screen, err := os.ReadFile(simAsk)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, string(screen), "agents", "detect", "--file", "-", "--agent", "sim", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var got struct {
		Agent, State, Field, Pattern, Question string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Agent != "sim" || got.State != "needs_input" || got.Field != "needs_input" || !strings.Contains(got.Question, "Create hello.txt?") {
		t.Errorf("got %+v", got)
	}
}

func TestAgentsDetectBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"agents", "detect", "--agent", "sim"}, "give --pane ID"},
		{"no agent", []string{"agents", "detect", "--file", simAsk}, "--agent is required"},
		{"unknown agent", []string{"agents", "detect", "--file", simAsk, "--agent", "nope"}, `unknown agent "nope"`},
		{"missing file", []string{"agents", "detect", "--file", "/nonexistent/screen.txt", "--agent", "sim"}, "/nonexistent/screen.txt"},
		{"json error", []string{"agents", "detect", "--agent", "nope", "--file", simAsk, "--json"}, `"exit_code":2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if out != "" {
				t.Errorf("wrote to stdout: %q", out)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q lacks %q", errOut, tc.want)
			}
		})
	}
}

func TestAgentsList(t *testing.T) {
	code, out, errOut := runCLI(t, "", "agents", "--json", "--no-version")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var got []struct {
		Name      string
		Installed bool
		Path      string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	names := map[string]bool{}
	for _, g := range got {
		names[g.Name] = true
		if g.Name == "sim" && (!g.Installed || g.Path == "") {
			t.Errorf("sim (the runner itself) not reported installed: %+v", g)
		}
	}
	for _, n := range []string{"claude", "codex", "gemini", "opencode", "aider", "shell", "sim"} {
		if !names[n] {
			t.Errorf("profile %s not listed", n)
		}
	}
	code, out, _ = runCLI(t, "", "agents", "--no-version")
	if code != 0 || !strings.HasPrefix(out, "AGENT") || !strings.Contains(out, "runner agent-sim") {
		t.Errorf("text listing: exit %d\n%s", code, out)
	}
}

func TestAgentsShow(t *testing.T) {
	code, out, errOut := runCLI(t, "", "agents", "show", "codex")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got["name"] != "codex" || got["enter_delay"] != "200ms" || got["model_flag"] != "--model" {
		t.Errorf("got %v", got)
	}
	if code, _, _ := runCLI(t, "", "agents", "show", "nope"); code != 2 {
		t.Errorf("unknown agent: exit %d, want 2", code)
	}
}

func TestAgentsDetectPaneFlags(t *testing.T) {
	dir := t.TempDir()
	screen := dir + "/pager.txt"
	if err := os.WriteFile(screen, []byte("line 1\nline 2\nnotes.txt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "busy\n"},
		{[]string{"--alternate-on", "--current-command", "less"}, "needs_input\n"},
		{[]string{"--dead-status", "3"}, "exited\n"},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"agents", "detect", "--file", screen, "--agent", "shell"}, tc.args...)...)
		if code != 0 || !strings.HasPrefix(out, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want %q first", tc.args, code, out, errOut, tc.want)
		}
	}
	if code, _, _ := runCLI(t, "", "agents", "detect", "--file", screen, "--agent", "shell", "--cursor-row", "-1"); code != 2 {
		t.Errorf("negative cursor row: exit %d, want 2", code)
	}
}
