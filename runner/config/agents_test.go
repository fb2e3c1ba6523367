package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoadAgentFiles: the agent files beside the config file override
// built-in agents and add new ones, under the config's own overrides,
// with or without a config file.
func TestLoadAgentFiles(t *testing.T) {
	dir := t.TempDir()
	env := mapEnv(map[string]string{"XDG_CONFIG_HOME": dir})
	cfgDir := filepath.Join(dir, "runner")
	writeFiles(t, cfgDir, map[string]string{
		"agents/claude.toml":  "# mine\nbusy = ['Thinking…']\nenter_delay = '400ms'\n",
		"agents/mycli.toml":   "description = 'my CLI'\ncommand = ['mycli']\nready = ['^> $']\nbusy = ['working']\n",
		"agents/README.md":    "not an agent file\n",
		"agents/codex.toml~":  "an editor's backup\n",
		"agents/old.toml.bak": "!!!\n",
	})
	if got := AgentsDir(env); got != filepath.Join(cfgDir, "agents") {
		t.Fatalf("AgentsDir = %q", got)
	}

	// No config file: the agent files alone.
	c, _, err := Load(env)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Profiles()
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	if want := []string{"claude", "codex", "gemini", "opencode", "qwen", "aider", "shell", "sim", "agy", "auggie", "cline", "copilot", "crush", "droid", "kilo", "pi", "mycli"}; !slices.Equal(names, want) {
		t.Errorf("profiles %q, want %q", names, want)
	}
	claude, _ := profile.FindProfile(ps, "claude")
	builtin, _ := profile.BuiltinProfile("claude")
	if !slices.Equal(claude.Busy, []string{"Thinking…"}) || !slices.Equal(claude.Ready, builtin.Ready) {
		t.Errorf("claude busy %q ready %q", claude.Busy, claude.Ready)
	}
	if o := claude.Origin("busy[0]"); o.File != filepath.Join(cfgDir, "agents/claude.toml") || o.Line != 2 || o.Builtin {
		t.Errorf("origin of busy[0]: %+v", o)
	}
	if o := claude.Origin("ready[0]"); !o.Builtin {
		t.Errorf("origin of ready[0]: %+v, want the built-in file", o)
	}

	// A config file on top: it may name the file's agents, override them,
	// and its enter_delay spares an agent file that sets its own.
	writeFiles(t, cfgDir, map[string]string{"config.json": `{"default_agent": "mycli", "enter_delay": "90ms",
		"profiles": {"mycli": {"model_flag": "-m"}, "claude": {"command": ["claude", "--verbose"]}}}`})
	c, path, err := Load(env)
	if err != nil {
		t.Fatal(err)
	}
	mycli, err := c.Profile("")
	if err != nil || mycli.Name != "mycli" || mycli.ModelFlag != "-m" || mycli.Description != "my CLI" {
		t.Fatalf("default agent %+v, %v", mycli, err)
	}
	if mycli.EnterDelay.Duration != 90*time.Millisecond {
		t.Errorf("mycli enter delay %v, want the config's", mycli.EnterDelay)
	}
	if o := mycli.Origin("model_flag"); o.File != path {
		t.Errorf("origin of model_flag: %+v, want the config file", o)
	}
	claude, _ = c.Profile("claude")
	if claude.EnterDelay.Duration != 400*time.Millisecond || !slices.Equal(claude.Command, []string{"claude", "--verbose"}) || claude.Busy[0] != "Thinking…" {
		t.Errorf("claude: enter delay %v, command %q, busy %q", claude.EnterDelay, claude.Command, claude.Busy)
	}
	if src := claude.Sources(); len(src) != 3 || !src[0].Builtin || src[2].File != path {
		t.Errorf("claude's sources %+v", src)
	}
}

// TestLoadBadAgentFile: a bad agent file stops every command that loads
// the config (exit 2), naming the file, the line and the key.
func TestLoadBadAgentFile(t *testing.T) {
	for _, tc := range []struct {
		name, file, text, want string
	}{
		{"bad regex", "claude.toml", "\nready = [\n  '(',\n]\n", `claude.toml:3: key "ready[0]": bad regular expression`},
		{"unknown key", "codex.toml", "redy = ['x']\n", `codex.toml:1: key "redy": unknown key (did you mean "ready"?`},
		{"wrong type", "sim.toml", "paste_raw = 'yes'\n", `sim.toml:1: key "paste_raw": want true or false, not a string`},
		{"syntax", "sim.toml", "busy = [\n", `sim.toml:1:9: array is incomplete`},
		{"new agent without command", "mine.toml", "ready = ['x']\n", `mine.toml: key "command": no built-in agent is named "mine"`},
		{"bad name", "My.toml", "command = ['x']\n", `My.toml: bad agent file name "My.toml"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, filepath.Join(dir, "runner", "agents"), map[string]string{tc.file: tc.text})
			for _, withConfig := range []bool{false, true} {
				if withConfig {
					writeFiles(t, filepath.Join(dir, "runner"), map[string]string{"config.json": `{}`})
				}
				_, _, err := Load(mapEnv(map[string]string{"XDG_CONFIG_HOME": dir}))
				var fe *profile.FileError
				if !errors.As(err, &fe) || !errors.Is(err, fault.ErrUsage) {
					t.Fatalf("error %v (%T), want a *profile.FileError that is a usage error", err, err)
				}
				if msg := err.Error(); !strings.HasPrefix(msg, filepath.Join(dir, "runner", "agents")) || !strings.Contains(msg, tc.want) {
					t.Errorf("error %q, want it to start with the file and hold %q", msg, tc.want)
				}
			}
		})
	}
}
