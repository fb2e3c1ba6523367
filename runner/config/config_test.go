package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/supervisor"

	"github.com/runner-cli/runner/runner/fault"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		json    string
		wantErr string // substring; "" means success
		check   func(t *testing.T, c *Config)
	}{
		{name: "empty object gives defaults", json: `{}`, check: func(t *testing.T, c *Config) {
			d := DefaultConfig()
			if c.DefaultAgent != "claude" || c.ReadyTimeout != d.ReadyTimeout || c.TaskTimeout.Duration != time.Hour ||
				c.Idle.Duration != 3*time.Second || c.Settle.Duration != 50*time.Millisecond || c.Retention.Duration != 24*time.Hour ||
				c.Awareness != (Awareness{Mode: "project", MaxChars: 1500}) || c.NotifyTimeout.Duration != 10*time.Second ||
				c.MaxLevel != 3 || c.MaxHops != 8 || c.MaxMessagesPerRoot != 200 || c.LockTimeout.Duration != 10*time.Second ||
				c.EnterDelay.Duration != 0 || c.TmuxBinary != "" || !c.NotifyTmux {
				t.Errorf("defaults: %+v", c)
			}
		}},
		{name: "every key", json: `{
			"default_agent": "sim", "ready_timeout": "30s", "task_timeout": "2h", "idle": "5s", "settle": "0s",
			"enter_delay": "300ms", "retention": "48h", "awareness": {"mode": "all", "max_chars": 500},
			"notify_command": ["notify-send", "runner"], "notify_timeout": "3s", "notify_tmux": false, "approve_rules": ["^Create .*\\.txt\\?$"],
			"model_aliases": {"claude": {"fast": "claude-haiku-4-5", "opus": ""}, "*": {"best": "x-large"}},
			"profiles": {"sim": {"enter_delay": "20ms"}}, "max_level": 0, "max_hops": 2,
			"max_messages_per_root": 10, "tmux_binary": "/usr/local/bin/tmux", "lock_timeout": "0s"}`,
			check: func(t *testing.T, c *Config) {
				if c.DefaultAgent != "sim" || c.ReadyTimeout.Duration != 30*time.Second || c.TaskTimeout.Duration != 2*time.Hour ||
					c.Idle.Duration != 5*time.Second || c.Settle.Duration != 0 || c.EnterDelay.Duration != 300*time.Millisecond ||
					c.Retention.Duration != 48*time.Hour || c.Awareness != (Awareness{"all", 500}) ||
					strings.Join(c.NotifyCommand, " ") != "notify-send runner" || c.NotifyTimeout.Duration != 3*time.Second ||
					c.MaxLevel != 0 || c.MaxHops != 2 || c.MaxMessagesPerRoot != 10 || c.TmuxBinary != "/usr/local/bin/tmux" ||
					c.LockTimeout.Duration != 0 || c.NotifyTmux {
					t.Errorf("config: %+v", c)
				}
				if rs := c.ApproveRegexps(); len(rs) != 1 || !rs[0].MatchString("Create hello.txt?") {
					t.Errorf("approve rules: %v", rs)
				}
				for _, m := range [][3]string{
					{"claude", "fast", "claude-haiku-4-5"},    // added
					{"claude", "sonnet", "claude-sonnet-4-5"}, // default kept
					{"claude", "opus", "opus"},                // removed with ""
					{"codex", "best", "x-large"},              // "*"
					{"gemini", "pro", "gemini-2.5-pro"},
					{"sim", "anything", "anything"},
				} {
					if got := c.ResolveModel(m[0], m[1]); got != m[2] {
						t.Errorf("ResolveModel(%s, %s) = %q, want %q", m[0], m[1], got, m[2])
					}
				}
				sim, err := c.Profile("")
				if err != nil || sim.Name != "sim" || sim.EnterDelay.Duration != 20*time.Millisecond {
					t.Errorf("default profile: %v %+v", err, sim)
				}
				claude, _ := c.Profile("claude")
				if claude.EnterDelay.Duration != 300*time.Millisecond {
					t.Errorf("global enter_delay not applied: %v", claude.EnterDelay)
				}
			}},
		{name: "ports: one key, the other's default kept", json: `{"ports": {"base": 30000}}`, check: func(t *testing.T, c *Config) {
			if c.Ports != (Ports{Base: 30000, Count: DefaultPortCount}) {
				t.Errorf("ports: %+v", c.Ports)
			}
		}},
		{name: "ports by default", json: `{}`, check: func(t *testing.T, c *Config) {
			if c.Ports != (Ports{Base: 20000, Count: 10}) {
				t.Errorf("ports: %+v", c.Ports)
			}
		}},
		{name: "ports.base not a port", json: `{"ports": {"base": 70000}}`, wantErr: `ports.base: 70000 is not a TCP port`},
		{name: "ports.count zero", json: `{"ports": {"count": 0}}`, wantErr: `ports.count: 0 is not a count of ports`},
		{name: "ports past 65535", json: `{"ports": {"base": 65530, "count": 10}}`, wantErr: `ports: 10 ports from 65530 go past 65535`},
		{name: "unknown key", json: `{"default_agnet": "sim"}`, wantErr: `default_agnet: unknown key (known keys: approve_rules, awareness,`},
		{name: "unknown nested key", json: `{"awareness": {"mode": "all", "chars": 3}}`, wantErr: `awareness.chars: unknown key (known keys: max_chars, mode)`},
		{name: "bad awareness mode", json: `{"awareness": {"mode": "everyone"}}`, wantErr: `awareness.mode: "everyone" is not one of project|all|off`},
		{name: "awareness not an object", json: `{"awareness": "all"}`, wantErr: `awareness: want a JSON object`},
		{name: "bad duration", json: `{"idle": "3 seconds"}`, wantErr: `idle: bad duration "3 seconds"`},
		{name: "duration as number", json: `{"ready_timeout": 60}`, wantErr: `ready_timeout: want a duration string like "30s" or "1h", got 60`},
		{name: "negative duration", json: `{"task_timeout": "-5m"}`, wantErr: `task_timeout: bad duration "-5m": negative`},
		{name: "zero timeout", json: `{"ready_timeout": "0s"}`, wantErr: `ready_timeout: must be more than 0s`},
		{name: "wrong type", json: `{"max_hops": "8"}`, wantErr: `max_hops: want an integer, got a JSON string`},
		{name: "wrong list type", json: `{"notify_command": "notify-send runner"}`, wantErr: `notify_command: want a list of strings, got a JSON string`},
		{name: "null", json: `{"default_agent": null}`, wantErr: `default_agent: null is not a value here`},
		{name: "bad regex in approve_rules", json: `{"approve_rules": ["ok", "Create (.*"]}`, wantErr: `approve_rules[1]: bad regular expression "Create (.*": error parsing regexp: missing closing )`},
		{name: "empty approve rule", json: `{"approve_rules": [""]}`, wantErr: `approve_rules[0]: empty rule`},
		{name: "bad permissions", json: `{"permissions": "maybe"}`, wantErr: `permissions must be ask, auto or default, not "maybe"`},
		{name: "unknown default agent", json: `{"default_agent": "clod"}`, wantErr: `default_agent: unknown agent "clod" (known: claude, codex,`},
		{name: "low max_hops", json: `{"max_hops": 0}`, wantErr: `max_hops: 0: must be at least 1`},
		{name: "bad max_chars", json: `{"awareness": {"max_chars": 0}}`, wantErr: `awareness.max_chars: 0: must be more than 0`},
		{name: "notify_tmux not a bool", json: `{"notify_tmux": "no"}`, wantErr: `notify_tmux: want true or false, got a JSON string`},
		{name: "max_turns negative", json: `{"max_turns": {"api": -1}}`, wantErr: `max_turns.api: -1 is not a count of turns`},
		{name: "empty notify program", json: `{"notify_command": [""]}`, wantErr: `notify_command[0]: empty program name`},
		{name: "relative tmux path", json: `{"tmux_binary": "bin/tmux"}`, wantErr: `tmux_binary: "bin/tmux": want a name looked up in PATH or an absolute path`},
		{name: "profile override unknown key", json: `{"profiles": {"claude": {"ready": ["x"], "redy": ["x"]}}}`, wantErr: `profiles.claude.redy: unknown key (known keys: `},
		{name: "profile override bad regex", json: `{"profiles": {"claude": {"busy": ["(("]}}}`, wantErr: `profiles.claude: profile "claude": key "busy[0]": bad regular expression`},
		{name: "profile override bad value", json: `{"profiles": {"codex": {"enter_delay": "soon"}}}`, wantErr: `profiles.codex: profile "codex": key "enter_delay": bad duration "soon"`},
		{name: "profile override renames", json: `{"profiles": {"codex": {"name": "x"}}}`, wantErr: `profiles.codex.name: "x" differs from the key "codex"`},
		{name: "profile not an object", json: `{"profiles": {"codex": ["x"]}}`, wantErr: `profiles.codex: want a JSON object`},
		{name: "bad profile name", json: `{"profiles": {"My Agent": {"command": ["x"]}}}`, wantErr: `profiles.My Agent: bad profile name`},
		{name: "new profile without command", json: `{"profiles": {"mine": {"ready": ["^> "]}}}`, wantErr: `profiles.mine: profile "mine": key "command": empty launch argv`},
		{name: "profile override keeps the rest", json: `{"profiles": {"claude": {"command": ["claude", "--verbose"]}}}`,
			check: func(t *testing.T, c *Config) {
				p, err := c.Profile("claude")
				if err != nil {
					t.Fatal(err)
				}
				b, _ := profile.BuiltinProfile("claude")
				if strings.Join(p.Command, " ") != "claude --verbose" || len(p.Ready) != len(b.Ready) || p.Ready[0] != b.Ready[0] {
					t.Errorf("override: %+v", p)
				}
				if d := profile.DetectPane(p, "❯\u00a0\n? for shortcuts\n", profile.PaneInfo{}); d.State != profile.StateReady {
					t.Errorf("overridden profile not compiled: %+v", d)
				}
			}},
		{name: "new profile", json: `{"default_agent": "mine", "model_aliases": {"mine": {"big": "m-70b"}},
			"profiles": {"mine": {"command": ["my-agent", "--tui"], "ready": ["^> $"], "busy": ["thinking"], "model_flag": "-m"}}}`,
			check: func(t *testing.T, c *Config) {
				ps, err := c.Profiles()
				if err != nil {
					t.Fatal(err)
				}
				last := ps[len(ps)-1]
				if last.Name != "mine" || len(ps) != len(profile.Builtins())+1 {
					t.Fatalf("profiles: last %q of %d", last.Name, len(ps))
				}
				p, err := c.Profile("")
				if err != nil || p.Name != "mine" || p.EnterDelay.Duration != profile.DefaultEnterDelay {
					t.Fatalf("default agent: %v %+v", err, p)
				}
				argv, err := p.Argv(profile.LaunchOptions{Model: c.ResolveModel("mine", "big")})
				if err != nil || strings.Join(argv, " ") != "my-agent --tui -m m-70b" {
					t.Errorf("argv %q, %v", argv, err)
				}
				if d := profile.DetectPane(p, "thinking\n", profile.PaneInfo{}); d.State != profile.StateBusy {
					t.Errorf("new profile detect: %+v", d)
				}
			}},
		{name: "aliases for an unknown agent", json: `{"model_aliases": {"claud": {"s": "x"}}}`, wantErr: `model_aliases.claud: unknown agent`},
		{name: "alias not a string", json: `{"model_aliases": {"claude": {"s": 1}}}`, wantErr: `model_aliases.claude.s: want a string, got a JSON number`},
		{name: "bad JSON line:column", json: "{\n  \"idle\": \"3s\",\n  \"settle\": \"1s\"\n  \"retention\": \"1h\"\n}", wantErr: `line 4, column 3: bad JSON: invalid character '"' after object key:value pair`},
		{name: "trailing comma", json: "{\"idle\": \"3s\",}", wantErr: `line 1, column 15: bad JSON`},
		{name: "not an object", json: `["idle"]`, wantErr: `want a JSON object`},
		{name: "empty file", json: " \n", wantErr: `the file is empty`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.json))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v\nwant one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestDefaultConfigIsValid(t *testing.T) {
	c := DefaultConfig()
	if err := c.validate(nil); err != nil {
		t.Fatal(err)
	}
	ps, err := c.Profiles()
	if err != nil || len(ps) != len(profile.Builtins()) {
		t.Fatalf("Profiles: %d, %v", len(ps), err)
	}
	if got := c.ResolveModel("claude", "sonnet"); got != "claude-sonnet-4-5" {
		t.Errorf("sonnet → %q", got)
	}
	if _, err := c.Profile("nope"); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("unknown profile: %v, want ErrUsage", err)
	}
	// Profiles are fresh: changing one does not change the next call's.
	ps[0].Ready[0] = "changed"
	again, _ := c.Profiles()
	if again[0].Ready[0] == "changed" {
		t.Error("Profiles shares state between calls")
	}
}

func TestConfigPath(t *testing.T) {
	cwd, _ := os.Getwd()
	for _, tc := range []struct {
		env        map[string]string
		path, from string
	}{
		{map[string]string{"RUNNER_CONFIG": "/etc/r.json", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/etc/r.json", ConfigFromEnv},
		{map[string]string{"RUNNER_CONFIG": "r.json"}, filepath.Join(cwd, "r.json"), ConfigFromEnv},
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/runner/config.json", ConfigFromXDG},
		{map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"}, "/h/.config/runner/config.json", ConfigFromHome},
		{map[string]string{"HOME": "/h"}, "/h/.config/runner/config.json", ConfigFromHome},
		{map[string]string{}, "", ""},
	} {
		path, from := Path(mapEnv(tc.env))
		if path != tc.path || from != tc.from {
			t.Errorf("Path(%v) = %q, %q; want %q, %q", tc.env, path, from, tc.path, tc.from)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": dir}
	// Missing file: defaults, the path, no error.
	c, path, err := Load(mapEnv(env))
	if err != nil || path != filepath.Join(dir, "runner", "config.json") || c.DefaultAgent != "claude" {
		t.Fatalf("missing file: %v %q %+v", err, path, c)
	}
	// No HOME at all (env -i): defaults, no path.
	if c, path, err := Load(mapEnv(nil)); err != nil || path != "" || c.MaxHops != 8 {
		t.Fatalf("no env: %v %q", err, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"default_agent": "sim", "idle": "1s"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, err = Load(mapEnv(env))
	if err != nil || c.DefaultAgent != "sim" || c.Idle.Duration != time.Second || c.Settle.Duration != 50*time.Millisecond {
		t.Fatalf("file: %v %+v", err, c)
	}
	if err := os.WriteFile(path, []byte(`{"awareness": {"mode": "everyone"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(mapEnv(env))
	want := "config " + path + `: awareness.mode: "everyone" is not one of project|all|off`
	if err == nil || err.Error() != want || !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("bad file: %v\nwant %s (wrapping ErrUsage)", err, want)
	}
	// A directory where the file should be: an error naming it.
	env["RUNNER_CONFIG"] = dir
	if _, _, err := Load(mapEnv(env)); err == nil || !strings.Contains(err.Error(), "config "+dir+":") || !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("directory: %v", err)
	}
}

func TestStateDir(t *testing.T) {
	cwd, _ := os.Getwd()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"RUNNER_STATE_DIR": "/s", "XDG_STATE_HOME": "/x", "HOME": "/h"}, "/s"},
		{map[string]string{"RUNNER_STATE_DIR": "rel"}, filepath.Join(cwd, "rel")},
		{map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/runner"},
		{map[string]string{"XDG_STATE_HOME": "rel", "HOME": "/h"}, "/h/.local/state/runner"},
		{map[string]string{"HOME": "/h"}, "/h/.local/state/runner"},
		{map[string]string{}, ""},
	} {
		got, err := StateDir(mapEnv(tc.env))
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("StateDir(%v) = %q, %v; want %q", tc.env, got, err, tc.want)
		}
	}
}

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// The example config of docs/configuration.md must stay a valid config.
func TestReadmeExampleConfig(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Configuration")
	_, block, ok2 := strings.Cut(sec, "```json\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/configuration.md: no ```json block under ## Configuration")
	}
	c, err := Parse([]byte(block))
	if err != nil {
		t.Fatalf("README example: %v", err)
	}
	if p, err := c.Profile("mine"); err != nil || p.ModelFlag != "-m" {
		t.Errorf("README example profile: %v", err)
	}
}

// BenchmarkLoadConfig: reading and validating a config with a profile
// override, as every dispatch does, against Builtins alone (the floor).
func BenchmarkLoadConfig(b *testing.B) {
	path := filepath.Join(b.TempDir(), "config.json")
	data := `{"default_agent": "sim", "approve_rules": ["^Create"], "profiles": {"claude": {"command": ["claude", "-v"]}}}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		b.Fatal(err)
	}
	env := mapEnv(map[string]string{"RUNNER_CONFIG": path})
	b.Run("builtins", func(b *testing.B) {
		for b.Loop() {
			_ = profile.Builtins()
		}
	})
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := Load(env); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDefaultsAreTheirOwners: the defaults the config documents are the
// ones the monitor and the supervisor use.
func TestDefaultsAreTheirOwners(t *testing.T) {
	if DefaultIdle != monitor.DefaultIdle || DefaultSettle != monitor.DefaultSettle || DefaultReadyTimeout != supervisor.DefaultReadyTimeout {
		t.Errorf("config's defaults (idle %v, settle %v, ready timeout %v) differ from monitor's (%v, %v) or supervisor's (%v)",
			DefaultIdle, DefaultSettle, DefaultReadyTimeout, monitor.DefaultIdle, monitor.DefaultSettle, supervisor.DefaultReadyTimeout)
	}
}
