package profile

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/fault"
)

// TestAskModeFor: the asking mode of each built-in CLI, chosen by the
// version its --version prints.
func TestAskModeFor(t *testing.T) {
	for _, tc := range []struct {
		agent, version string
		args           []string
		env            string // a variable the mode sets
		err            string // in the error, when there is one
	}{
		{agent: "claude", version: "2.1.197 (Claude Code)", args: []string{"--permission-mode", "default"}},
		{agent: "claude", version: "2.1.199", args: []string{"--permission-mode", "default"}},
		{agent: "claude", version: "2.1.200 (Claude Code)", args: []string{"--permission-mode", "manual"}},
		{agent: "claude", version: "2.1.282", args: []string{"--permission-mode", "manual"}},
		{agent: "claude", version: "2.1.283", args: []string{"--permission-mode", "manual"}},
		{agent: "claude", version: "2.1.332 (Claude Code)", args: []string{"--permission-mode", "manual"}},
		{agent: "claude", version: "1.0.0", args: []string{"--permission-mode", "default"}},
		{agent: "claude", version: "3.0.0", args: []string{"--permission-mode", "manual"}},
		{agent: "claude", version: "", err: "depends on its version"},
		{agent: "claude", version: "command not found", err: `"command not found" names none`},
		{agent: "codex", version: "", args: []string{"--ask-for-approval", "on-request", "--sandbox", "read-only"}},
		{agent: "codex", version: "codex-cli 0.171.0", args: []string{"--ask-for-approval", "on-request", "--sandbox", "read-only"}},
		{agent: "gemini", args: []string{"--approval-mode", "default"}},
		{agent: "qwen", version: "0.24.4", args: []string{"--approval-mode", "default"}},
		{agent: "opencode", env: `OPENCODE_PERMISSION={"edit":"ask","bash":"ask"`},
		{agent: "copilot"},
		{agent: "aider"},
		{agent: "sim"},
		{agent: "pi", version: "0.73.1", err: "agent pi has no asking mode (pi asks no approvals"},
		{agent: "shell", err: "agent shell has no asking mode (the profile sets no \"permissions_ask\")"},
	} {
		p, err := BuiltinProfile(tc.agent)
		if err != nil {
			t.Fatal(err)
		}
		m, err := p.AskModeFor(tc.version)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, fault.ErrUsage) {
				t.Errorf("%s %q: %v, want a usage error with %q", tc.agent, tc.version, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: %v", tc.agent, tc.version, err)
			continue
		}
		if !slices.Equal(m.Args, tc.args) {
			t.Errorf("%s %q: args %q, want %q", tc.agent, tc.version, m.Args, tc.args)
		}
		if env := strings.Join(m.EnvList(), "\n"); !strings.Contains(env, tc.env) || tc.env == "" && env != "" {
			t.Errorf("%s %q: env %q, want %q", tc.agent, tc.version, env, tc.env)
		}
		if m.Doc == "" {
			t.Errorf("%s %q: no doc", tc.agent, tc.version)
		}
	}
}

// TestAskNeedsVersion: only a mode that differs by version makes the
// dispatch run the CLI's --version.
func TestAskNeedsVersion(t *testing.T) {
	for name, want := range map[string]bool{"claude": true, "codex": false, "qwen": false, "opencode": false, "sim": false, "pi": false} {
		p, _ := BuiltinProfile(name)
		if got := p.AskNeedsVersion(); got != want {
			t.Errorf("%s: AskNeedsVersion %v, want %v", name, got, want)
		}
	}
}

// TestAskModeArgv: the asking mode's arguments go before --agent-arg's,
// so a flag of the user's comes last and wins.
func TestAskModeArgv(t *testing.T) {
	claude, _ := BuiltinProfile("claude")
	m, err := claude.AskModeFor("2.1.332")
	if err != nil {
		t.Fatal(err)
	}
	got, err := claude.Argv(LaunchOptions{Model: "opus", Permissions: PermissionsAsk, Ask: m, ExtraArgs: []string{"--permission-mode", "plan"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"claude", "--model", "opus", "--permission-mode", "manual", "--permission-mode", "plan"}
	if !slices.Equal(got, want) {
		t.Errorf("argv %q, want %q", got, want)
	}
	got, _ = claude.Argv(LaunchOptions{Permissions: PermissionsDefault, Ask: m})
	if !slices.Equal(got, []string{"claude"}) {
		t.Errorf("default permissions: argv %q, want the command alone", got)
	}
}

// TestPermissionsAskChecked: a bad entry in an agent file names its key.
func TestPermissionsAskChecked(t *testing.T) {
	base, _ := BuiltinProfile("claude")
	for _, tc := range []struct{ json, want string }{
		{`{"permissions_ask": [{"since": "new", "doc": "x"}]}`, `key "permissions_ask[0].since": "new" is no version`},
		{`{"permissions_ask": [{"since": "2.0", "before": "1.9", "doc": "x"}]}`, `key "permissions_ask[0]": empty range: since 2.0 is not before 1.9`},
		{`{"permissions_ask": [{"args": ["--ask"]}]}`, `key "permissions_ask[0].doc": empty`},
		{`{"permissions_ask": [{"env": {"A=B": "c"}, "doc": "x"}]}`, `key "permissions_ask[0].env": bad variable name "A=B"`},
	} {
		_, err := MergeProfile("claude", base, []byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.json, err, tc.want)
		}
	}
	p, err := MergeProfile("claude", base, []byte(`{"permissions_ask": [{"since": "2.2", "args": ["--ask"], "doc": "mine"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.AskModeFor("2.1.332"); err == nil || !strings.Contains(err.Error(), "covers >= 2.2") {
		t.Errorf("a version the file does not cover: %v", err)
	}
	if m, err := p.AskModeFor("2.3.0"); err != nil || !slices.Equal(m.Args, []string{"--ask"}) {
		t.Errorf("2.3.0: %v, %v; want the file's --ask", m.Args, err)
	}
}

func TestCheckPermissions(t *testing.T) {
	for _, m := range PermissionsModes {
		if err := CheckPermissions("--permissions", m); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	err := CheckPermissions("--permissions", "bogus")
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), `--permissions must be ask, auto or default, not "bogus"`) {
		t.Errorf("bogus: %v", err)
	}
}
