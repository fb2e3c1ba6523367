package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLIEnv runs the CLI in-process with in-memory streams and only the
// environment env.
func runCLIEnv(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	a, flush := newApp(strings.NewReader(""), &out, &errOut, func(k string) string { return env[k] })
	code = a.run(context.Background(), args)
	flush()
	return code, out.String(), errOut.String()
}

// agentsEnv is an environment whose config directory holds the given
// agent files.
func agentsEnv(t *testing.T, files map[string]string) (map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	agents := filepath.Join(dir, "runner", "agents")
	if err := os.MkdirAll(agents, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(agents, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]string{"XDG_CONFIG_HOME": dir, "HOME": dir}, agents
}

func TestAgentsCheck(t *testing.T) {
	env, dir := agentsEnv(t, map[string]string{
		"mycli.toml":  "command = ['mycli']\nready = ['^> $']\n",
		"claude.toml": "busy = ['Thinking']\n",
		"bad.toml":    "command = ['x']\n\nredy = ['^> ']\n",
	})
	good, bad := filepath.Join(dir, "mycli.toml"), filepath.Join(dir, "bad.toml")

	code, out, errOut := runCLIEnv(t, env, "agents", "check", good, filepath.Join(dir, "claude.toml"))
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"ok   " + good + ": defines the new agent mycli (command, ready)", "overrides the built-in agent claude (busy)"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runCLIEnv(t, env, "agents", "check", bad)
	if code != 2 || errOut != "" || !strings.HasPrefix(out, "bad  "+bad+`:3: key "redy": unknown key (did you mean "ready"?`) {
		t.Errorf("bad file: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// No FILE: every file of the agents folder.
	code, out, _ = runCLIEnv(t, env, "agents", "check", "--json")
	var got []struct {
		File, Agent string
		OK          bool
		Overrides   bool `json:"overrides_builtin"`
		Error       *struct {
			File, Key, Message string
			Line               int
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if code != 2 || len(got) != 3 {
		t.Fatalf("exit %d, %d results: %s", code, len(got), out)
	}
	for _, g := range got {
		switch g.Agent {
		case "bad":
			if g.OK || g.Error == nil || g.Error.File != bad || g.Error.Line != 3 || g.Error.Key != "redy" || !strings.Contains(g.Error.Message, "unknown key") {
				t.Errorf("bad: %+v %+v", g, g.Error)
			}
		case "claude":
			if !g.OK || !g.Overrides {
				t.Errorf("claude: %+v", g)
			}
		case "mycli":
			if !g.OK || g.Overrides {
				t.Errorf("mycli: %+v", g)
			}
		}
	}

	if code, out, _ := runCLIEnv(t, env, "agents", "check", filepath.Join(dir, "none.toml")); code != 2 || !strings.Contains(out, "none.toml: cannot read it") {
		t.Errorf("missing file: exit %d, %q", code, out)
	}
	empty, _ := agentsEnv(t, nil)
	if code, out, _ := runCLIEnv(t, empty, "agents", "check"); code != 0 || !strings.HasPrefix(out, "no agent files in ") {
		t.Errorf("no files: exit %d, %q", code, out)
	}
}

func TestAgentsExplain(t *testing.T) {
	code, out, errOut := runCLI(t, "", "agents", "explain", "--screen", simAsk, "--agent", "sim")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"needs_input\n", `  decided by: needs_input[0] '^❯ 1\. Yes' at agents/sim.toml:`, "(built in)",
		"  line 23: ❯ 1. Yes", "    Create hello.txt?", "profile sim: agents/sim.toml (built in)", "RULE", "needs_input[1]    matches, not tried  24"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// A rule of the user's file names that file and line.
	env, dir := agentsEnv(t, map[string]string{"sim.toml": "# mine\nneeds_input = [\n  'Create \\S+\\?',\n]\n"})
	code, out, errOut = runCLIEnv(t, env, "agents", "explain", "--screen", simAsk, "--agent", "sim", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var ex struct {
		State   string
		Decided struct {
			Rule   string
			Origin struct {
				File string
				Line int
			}
			Lines []struct{ N int }
		}
		Sources []struct{ File string }
	}
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if ex.State != "needs_input" || ex.Decided.Rule != "needs_input[0]" || ex.Decided.Origin.File != filepath.Join(dir, "sim.toml") ||
		ex.Decided.Origin.Line != 3 || len(ex.Sources) != 2 {
		t.Errorf("got %+v", ex)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no screen", []string{"agents", "explain", "--agent", "sim"}, "give one of --screen"},
		{"no agent", []string{"agents", "explain", "--screen", simAsk}, "--agent is required"},
		{"unknown agent", []string{"agents", "explain", "--screen", simAsk, "--agent", "nope"}, `unknown agent "nope"`},
		{"missing screen", []string{"agents", "explain", "--screen", "/nonexistent/s.txt", "--agent", "sim"}, "agents explain: read screen /nonexistent/s.txt"},
		{"json error", []string{"agents", "explain", "--agent", "nope", "--screen", simAsk, "--json"}, `"exit_code":2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tc.args...)
			if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, tc.want)
			}
		})
	}
}

func TestAgentsShowFiles(t *testing.T) {
	code, out, _ := runCLI(t, "", "agents", "show", "--toml", "codex")
	if code != 0 || !strings.Contains(out, "verified_version = ") || !strings.Contains(out, "[[trust]]") {
		t.Errorf("show --toml codex: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "", "agents", "show", "--toml", "nope"); code != 2 || !strings.Contains(errOut, `no built-in agent "nope"`) {
		t.Errorf("show --toml nope: exit %d, %q", code, errOut)
	}
	// show prints the profile as the user's files make it.
	env, _ := agentsEnv(t, map[string]string{"codex.toml": "enter_delay = '500ms'\n"})
	code, out, _ = runCLIEnv(t, env, "agents", "show", "codex")
	if code != 0 || !strings.Contains(out, `"enter_delay": "500ms"`) {
		t.Errorf("show codex with an override: exit %d\n%s", code, out)
	}
}
