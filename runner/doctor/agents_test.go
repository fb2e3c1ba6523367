package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

func TestCheckAgents(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "fakecli")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'fakecli version 1.2.3 (build abc)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	failing := filepath.Join(dir, "badcli")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho 'no such flag' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	ps := []*profile.Profile{
		{Name: "fake", Command: []string{"fakecli"}, VersionArgs: []string{"--version"}},
		{Name: "bad", Command: []string{"badcli"}, VersionArgs: []string{"--version"}},
		{Name: "absent", Command: []string{"not-installed-cli"}},
		{Name: "self", Command: []string{SelfBinary, "agent-sim"}},
	}
	got := CheckAgents(context.Background(), ps, "/opt/runner", true)
	if g := got[0]; !g.Installed || g.Path != script || g.Version != "1.2.3" {
		t.Errorf("fake: %+v", g)
	}
	if g := got[1]; !g.Installed || g.Version != "" || !strings.Contains(g.VersionError, "no such flag") {
		t.Errorf("bad: %+v", g)
	}
	if g := got[2]; g.Installed || g.Path != "" {
		t.Errorf("absent: %+v", g)
	}
	if g := got[3]; !g.Installed || g.Path != "/opt/runner" {
		t.Errorf("self: %+v", g)
	}
	if g := CheckAgents(context.Background(), ps[:1], "", false)[0]; g.Version != "" {
		t.Errorf("version read though not asked: %+v", g)
	}
}

// TestAskSummary: `runner agents` says what --permissions ask passes each
// CLI for its installed version.
func TestAskSummary(t *testing.T) {
	for _, tc := range []struct{ agent, version, want string }{
		{"claude", "2.1.197", "--permission-mode default: default: every file edit"},
		{"claude", "2.1.332", "--permission-mode manual: manual: every file edit"},
		{"claude", "", "by version (version not read): see 'runner agents show claude'"},
		{"opencode", "1.18.33", `OPENCODE_PERMISSION={"edit":"ask"`},
		{"copilot", "1.0.102", "nothing passed: its own default"},
		{"pi", "0.73.1", "none: runner's default runs it in its own default mode; --permissions ask exits 2"},
	} {
		p, err := profile.BuiltinProfile(tc.agent)
		if err != nil {
			t.Fatal(err)
		}
		if got := AskSummary(p, tc.version); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s %q: %q, want it to start with %q", tc.agent, tc.version, got, tc.want)
		}
	}
}
