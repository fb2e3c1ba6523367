package main

import (
	"os"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

// TestRootHelp: `runner --help` names every built-in agent (from the
// profiles, so a new one shows at once) and puts every command in a group.
func TestRootHelp(t *testing.T) {
	code, out, _ := runCLI(t, "", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, p := range profile.Builtins() {
		if p.Name == "sim" {
			continue
		}
		if !strings.Contains(out, "("+p.Name+")") {
			t.Errorf("--help does not name the built-in agent %s:\n%s", p.Name, out)
		}
	}
	if strings.Contains(out, "Additional Commands") {
		t.Errorf("a command outside every group:\n%s", out)
	}
	a, flush := newApp(strings.NewReader(""), os.Stdout, os.Stderr, func(string) string { return "" })
	defer flush()
	for _, c := range a.newRootCmd().Commands() {
		if !c.Hidden && c.GroupID == "" && c.Name() != "help" && c.Name() != "completion" {
			t.Errorf("runner %s has no group", c.Name())
		}
	}
	for _, g := range commandGroups {
		if !strings.Contains(out, g.title) {
			t.Errorf("group %q missing from --help", g.title)
		}
	}
}
