package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckAgentFiles: the files of a folder, each checked alone, with
// its line: an override, a new agent, a bad file named with its line.
func TestCheckAgentFiles(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"claude.toml": "ready = ['^> $']\n",
		"mine.toml":   "command = ['mine']\n",
		"bad.toml":    "command = [\n",
		"notes.txt":   "not an agent file",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, err := AgentFilesIn(dir)
	if err != nil || len(files) != 3 {
		t.Fatalf("files %v, %v", files, err)
	}
	checks, bad := CheckAgentFiles(files)
	if len(checks) != 3 || bad != 1 {
		t.Fatalf("%d checks, %d bad: %+v", len(checks), bad, checks)
	}
	lines := map[string]string{}
	for _, c := range checks {
		lines[filepath.Base(c.File)] = c.Line()
	}
	if l := lines["claude.toml"]; !strings.HasPrefix(l, "ok   ") || !strings.Contains(l, "overrides the built-in agent claude (ready)") {
		t.Errorf("claude: %q", l)
	}
	if l := lines["mine.toml"]; !strings.Contains(l, "defines the new agent mine (command)") {
		t.Errorf("mine: %q", l)
	}
	if l := lines["bad.toml"]; !strings.HasPrefix(l, "bad  ") || !strings.Contains(l, "bad.toml") {
		t.Errorf("bad: %q", l)
	}
	if files, err := AgentFilesIn(filepath.Join(dir, "none")); err != nil || len(files) != 0 {
		t.Errorf("no folder: %v %v", files, err)
	}
}
