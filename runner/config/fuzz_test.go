package config

import "testing"

// FuzzParseConfig: any config file is a Config or an error, never a panic;
// a Config that parsed validates as the loader left it.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"idle": "3s", "settle": "1s", "retention": "48h", "awareness": {"mode": "all", "max_chars": 500}}`,
		`{"profiles": {"sim": {"enter_delay": "20ms", "pass_env": ["ANTHROPIC_*"]}}, "default_agent": "sim"}`,
		`{"approve_rules": ["Bash(git status)"], "model_aliases": {"claude": {"fast": "haiku"}}, "max_level": 3}`,
		`{"isolation": {"*": "worktree"}, "worktree_setup": {"*": {"copy": [".env"], "run": ["npm ci"]}}}`,
		"{\n  \"idle\": \"3s\",\n  \"settle\": \"1s\"\n  \"retention\": \"1h\"\n}",
		`{"tmux_binary": "relative/tmux"}`,
		`[]`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err == nil && c == nil {
			t.Fatal("no config and no error")
		}
	})
}
