package confine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/fault"
)

func TestMapHomePath(t *testing.T) {
	copies := map[string]string{"/h/.claude": "/s/homes/t_1/.claude", "/h/.claude/projects": "/s/other"}
	for p, want := range map[string]string{
		"/h/.claude/x.jsonl":          "/s/homes/t_1/.claude/x.jsonl",
		"/h/.claude":                  "/s/homes/t_1/.claude",
		"/h/.claude/projects/a.jsonl": "/s/other/a.jsonl", // the longest copy wins
		"/h/.claudette/x":             "/h/.claudette/x",  // not under it
		"/elsewhere":                  "/elsewhere",
	} {
		if got := MapHomePath(copies, p); got != want {
			t.Errorf("MapHomePath(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestHomeCopies: each path copied once under root at its place in home
// (a second call keeps the task's copy), a file too; past the limit, a
// usage error that says what to do.
func TestHomeCopies(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	dir := filepath.Join(home, ".claude")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for p, s := range map[string]string{filepath.Join(dir, "sub", "a"): "one", filepath.Join(home, ".claude.json"): "{}"} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copies, err := HomeCopies(root, home, []string{dir, filepath.Join(home, ".claude.json")})
	if err != nil {
		t.Fatal(err)
	}
	c := copies[dir]
	if b, err := os.ReadFile(filepath.Join(c, "sub", "a")); err != nil || string(b) != "one" || !strings.HasPrefix(c, root) {
		t.Fatalf("copy %q: %q, %v", c, b, err)
	}
	if err := os.WriteFile(filepath.Join(c, "sub", "a"), []byte("the task's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := HomeCopies(root, home, []string{dir}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(c, "sub", "a")); string(b) != "the task's" {
		t.Errorf("a second call copied again: %q", b)
	}
	big := filepath.Join(home, ".big")
	if err := os.MkdirAll(big, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(big, "blob"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(homeCopyMax + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := HomeCopies(t.TempDir(), home, []string{big}); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "shared home") {
		t.Errorf("too big: %v", err)
	}
}

// TestSpecFor: the folder and git directory writable, what says what git
// runs read-only, runner's state hidden, the door's socket open.
func TestSpecFor(t *testing.T) {
	dir := t.TempDir()
	git := filepath.Join(dir, ".git")
	if err := os.MkdirAll(git, 0o700); err != nil {
		t.Fatal(err)
	}
	stateDir := t.TempDir()
	spec := SpecFor(Place{Dir: dir, GitCommon: git, StateDir: stateDir, DoorDir: filepath.Join(stateDir, "door"),
		Events: filepath.Join(stateDir, "ev")}, []string{"/h/.claude"})
	for _, c := range []struct {
		name string
		list []string
		want string
	}{
		{"writable", spec.Writable, dir},
		{"writable", spec.Writable, "/h/.claude"},
		{"pinned", spec.Pinned, git},
		{"read-only", spec.ReadOnly, filepath.Join(git, "config")},
		{"read-only", spec.ReadOnly, filepath.Join(git, "hooks")},
		{"hidden", spec.Hidden, stateDir},
		{"open", spec.Open, filepath.Join(stateDir, "ev")},
		{"sockets", spec.Sockets, filepath.Join(stateDir, "door", "door.sock")},
	} {
		if !slices.Contains(c.list, c.want) {
			t.Errorf("%s %q does not hold %s", c.name, c.list, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(git, "hooks")); err != nil {
		t.Errorf("the hooks folder was not made (the agent could plant it): %v", err)
	}
}

// TestImports keeps the package doc true.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "gitsnap", "runner/config", "runner/door", "runner/fault", "runner/sandbox")
}

// TestAgentEnv: with copies, HOME is the copies' home and an absolute
// path variable lies in the copies; without, the process's environment.
func TestAgentEnv(t *testing.T) {
	t.Setenv("CODEX_HOME", "/home/u/.codex")
	t.Setenv("RUNNER_TEST_WORD", "plain")
	copies := map[string]string{"/home/u/.codex": "/state/t1/codex"}
	get := AgentEnv(copies, "/state/t1/home")
	for k, want := range map[string]string{"HOME": "/state/t1/home", "CODEX_HOME": "/state/t1/codex", "RUNNER_TEST_WORD": "plain"} {
		if got := get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := AgentEnv(nil, "/x")("CODEX_HOME"); got != "/home/u/.codex" {
		t.Errorf("no copies: CODEX_HOME = %q", got)
	}
	if AgentPath(nil) != nil || AgentPath(copies)("/home/u/.codex/s.jsonl") != "/state/t1/codex/s.jsonl" {
		t.Error("AgentPath does not map into the copies")
	}
}
