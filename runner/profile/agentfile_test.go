package profile

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func builtinForTest(t *testing.T, name string) *Profile {
	t.Helper()
	p, err := BuiltinProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAgentFileErrors: every error of an agent file names the file, the
// line and the key, and says what is wrong.
func TestAgentFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		file     string // its base name
		toml     string
		base     string // a built-in to override; "" for a new agent
		line     int
		key      string
		contains string
	}{
		{"syntax", "claude.toml", "ready = ['x'\nbusy = 1\n", "claude", 2, "", "expected"},
		{"unknown key", "claude.toml", "description = 'x'\n\nredy = ['^> ']\n", "claude", 3, "redy", `unknown key (did you mean "ready"?`},
		{"unknown nested key", "claude.toml", "[hook]\nkind = 'flag'\nkindd = 'x'\n", "claude", 3, "hook.kindd", `did you mean "kind"?`},
		{"unknown key in a trust table", "claude.toml", "[[trust]]\npattern = 'x'\nkeys = ['Enter']\n\n[[trust]]\npatern = 'y'\n", "claude", 6, "trust[1].patern", "unknown key"},
		{"wrong type", "claude.toml", "\nbottom_lines = 'many'\n", "claude", 2, "bottom_lines", "want an integer, not a string"},
		{"wrong element type", "claude.toml", "busy = [\n  'a',\n  3,\n]\n", "claude", 3, "busy[1]", "want a string, not an integer"},
		{"string for a list", "claude.toml", "ready = '^> '\n", "claude", 1, "ready", "want an array of strings, not a string"},
		{"bad regex", "claude.toml", "busy = [\n  'ok',\n  '(unclosed',\n]\n", "claude", 3, "busy[1]", "bad regular expression"},
		{"bad regex in an inline table", "claude.toml", "trust = [\n  { pattern = 'x', keys = ['Enter'] },\n  { pattern = '[', keys = ['y'] },\n]\n", "claude", 3, "trust[1].pattern", "bad regular expression"},
		{"trust without keys", "claude.toml", "[[trust]]\npattern = 'x'\nkeys = []\n", "claude", 3, "trust[0].keys", "no keys"},
		{"bad duration", "claude.toml", "enter_delay = 'soon'\n", "claude", 1, "enter_delay", `bad duration "soon"`},
		{"boolean duration", "claude.toml", "enter_delay = true\n", "claude", 1, "enter_delay", "want a duration"},
		{"bad hook kind", "claude.toml", "[hook]\nkind = 'magic'\n", "claude", 2, "hook.kind", `unknown kind "magic"`},
		{"env not a table", "claude.toml", "env = ['A=1']\n", "claude", 1, "env", "want a table of strings"},
		{"name differs", "claude.toml", "name = 'codex'\n", "claude", 1, "name", `"codex" differs from the file's name "claude"`},
		{"new agent without command", "mine.toml", "ready = ['^> ']\n", "", 0, "command", "needs the argv that starts it"},
		{"bad file name", "My Agent.toml", "command = ['x']\n", "", 0, "", "bad agent file name"},
		{"not .toml", "mine.json", "command = ['x']\n", "", 0, "", "want NAME.toml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/cfg/agents/" + tc.file
			f, err := ParseFile(path, []byte(tc.toml))
			if err == nil {
				var base *Profile
				if tc.base != "" {
					base = builtinForTest(t, tc.base)
				}
				_, err = f.Apply(base)
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want a *FileError", err, err)
			}
			if fe.File != path || fe.Line != tc.line || fe.Key != tc.key || !strings.Contains(fe.Err.Error(), tc.contains) {
				t.Errorf("got file %q line %d key %q: %v\nwant file %q line %d key %q, %q", fe.File, fe.Line, fe.Key, fe.Err, path, tc.line, tc.key, tc.contains)
			}
			if !strings.HasPrefix(err.Error(), path) {
				t.Errorf("message %q does not start with the file", err)
			}
		})
	}
}

// TestAgentFileOverride: a user's file replaces the keys it sets (a list
// whole, a table key by key), keeps the others, and the origin of each
// key follows.
func TestAgentFileOverride(t *testing.T) {
	base := builtinForTest(t, "claude")
	src := `# a comment
enter_delay = "300ms"
busy = [
  'esc to interrupt',
  'Thinking…',
]
env = { FOO = 'bar' }

[hook]
doc = 'mine'
`
	f, err := ParseFile("/cfg/agents/claude.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Apply(base)
	if err != nil {
		t.Fatal(err)
	}
	if p.EnterDelay.Duration != 300*time.Millisecond || !slices.Equal(p.Busy, []string{"esc to interrupt", "Thinking…"}) {
		t.Errorf("keys not set: enter_delay %v busy %q", p.EnterDelay, p.Busy)
	}
	if !slices.Equal(p.Ready, base.Ready) || p.ModelFlag != base.ModelFlag {
		t.Errorf("keys the file does not set changed")
	}
	if p.Env["FOO"] != "bar" || p.Env["DISABLE_AUTOUPDATER"] != "1" {
		t.Errorf("env not merged key by key: %v", p.Env)
	}
	if p.Hook.Doc != "mine" || p.Hook.Kind != base.Hook.Kind || p.Hook.Settings != base.Hook.Settings {
		t.Errorf("hook not merged key by key: %+v", p.Hook)
	}
	if base.Hook.Doc == "mine" || base.Env["FOO"] != "" {
		t.Error("Apply modified its base")
	}
	if d := Detect(p, "Thinking…\n"); d.State != StateBusy {
		t.Errorf("not compiled with the new pattern: %+v", d)
	}
	for key, want := range map[string]Origin{
		"busy[1]":     {File: "/cfg/agents/claude.toml", Line: 5},
		"busy":        {File: "/cfg/agents/claude.toml", Line: 3},
		"enter_delay": {File: "/cfg/agents/claude.toml", Line: 2},
		"env.FOO":     {File: "/cfg/agents/claude.toml", Line: 7},
		"hook.doc":    {File: "/cfg/agents/claude.toml", Line: 10},
	} {
		if got := p.Origin(key); got != want {
			t.Errorf("origin of %s: %+v, want %+v", key, got, want)
		}
	}
	for _, key := range []string{"busy[2]", "ready[0]", "hook.kind", "env.DISABLE_AUTOUPDATER"} {
		if got := p.Origin(key); key != "busy[2]" && (!got.Builtin || got.File != "agents/claude.toml" || got.Line == 0) {
			t.Errorf("origin of %s: %+v, want the built-in file's line", key, got)
		}
	}
	if o := p.Origin("busy[2]"); o.File != "/cfg/agents/claude.toml" {
		t.Errorf("busy[2] (gone) still has the built-in origin %+v", o)
	}
	if src := p.Sources(); len(src) != 2 || !src[0].Builtin || src[1].File != "/cfg/agents/claude.toml" {
		t.Errorf("sources %+v", src)
	}
}

// TestAgentFileNew: a file whose name is no built-in's defines a new
// agent, from nothing but its keys and the defaults.
func TestAgentFileNew(t *testing.T) {
	f, err := ParseFile("/cfg/agents/mycli.toml", []byte("command = ['mycli', '--tui']\nready = ['^> $']\nbusy = ['working']\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Apply(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "mycli" || p.EnterDelay.Duration != DefaultEnterDelay || p.BottomLines != DefaultBottomLines {
		t.Errorf("new agent %+v", p)
	}
	if d := Detect(p, "working\n"); d.State != StateBusy {
		t.Errorf("detect: %+v", d)
	}
}

// TestReadmeAgentFile: the example agent file of docs/agents.md is a valid
// override of the built-in claude.
func TestReadmeAgentFile(t *testing.T) {
	b, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Agent files")
	_, block, ok2 := strings.Cut(sec, "```toml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/agents.md: no ```toml block under ## Agent files")
	}
	f, err := ParseFile("/home/me/.config/runner/agents/claude.toml", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Apply(builtinForTest(t, "claude"))
	if err != nil {
		t.Fatalf("README example: %v", err)
	}
	if p.EnterDelay.Duration != 300*time.Millisecond || p.Env["DISABLE_AUTOUPDATER"] != "1" || len(p.Env) != 2 {
		t.Errorf("README example applied: enter_delay %v, env %v", p.EnterDelay, p.Env)
	}
}
