package doctor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/config"
)

func TestShebangProgram(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line, want string
		ok         bool
	}{
		{"#!/usr/bin/env node", "node", true},
		{"#!/usr/bin/env  node  --no-warnings", "node", true},
		{"#!/usr/bin/env -S node --max-old-space-size=4096", "node", true},
		{"#!/usr/bin/env -u HOME NODE_OPTIONS=x nodejs", "nodejs", true},
		{"#! /usr/local/bin/node", "/usr/local/bin/node", true},
		{"#!/bin/sh", "/bin/sh", true},
		{"#!/usr/bin/env", "", false},
		{"\x7fELF\x02\x01", "", false},
		{"// no shebang", "", false},
	} {
		got, ok := shebangProgram(tc.line)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q: %q, %v; want %q, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

// fakeCLI installs a package as npm install -g --prefix does: the package
// in PREFIX/lib/node_modules/NAME, its bin linked from PREFIX/bin.
func fakeCLI(t *testing.T, prefix, name, packageJSON, script string) {
	t.Helper()
	root := filepath.Join(prefix, "lib", "node_modules", "@fake", name)
	writeFile(t, filepath.Join(root, "package.json"), packageJSON, 0o644)
	writeFile(t, filepath.Join(root, "dist", "cli.js"), script, 0o755)
	if err := os.MkdirAll(filepath.Join(prefix, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "lib", "node_modules", "@fake", name, "dist", "cli.js"), filepath.Join(prefix, "bin", name)); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

func TestFindNodeProgram(t *testing.T) {
	prefix := t.TempDir()
	fakeCLI(t, prefix, "new", `{"name": "@fake/new", "version": "2.1.332", "bin": {"new": "dist/cli.js"}, "engines": {"node": ">=22.0.0"}}`, "#!/usr/bin/env node\n")
	fakeCLI(t, prefix, "old", `{"name": "@fake/old", "version": "1.0.0", "engines": ["node >= 0.8"]}`, "#!/usr/bin/env node\n")
	fakeCLI(t, prefix, "native", `{"name": "@fake/native", "version": "1.0.0", "engines": {"node": ">=22"}}`, "\x7fELF\x02\x01\x01")
	// A package.json in a folder above, outside node_modules, that does
	// not name the script: not its package.
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "package.json"), `{"name": "my-app", "engines": {"node": ">=99"}}`, 0o644)
	writeFile(t, filepath.Join(home, "bin", "tool"), "#!/usr/bin/node\n", 0o755)
	// One that does, by its "bin".
	writeFile(t, filepath.Join(home, "cli", "package.json"), `{"name": "mine", "version": "0.1.0", "bin": "./run.js", "engines": {"node": "^20"}}`, 0o644)
	writeFile(t, filepath.Join(home, "cli", "run.js"), "#!/usr/bin/env node\n", 0o755)

	for _, tc := range []struct {
		path           string
		ok             bool
		interp, pkg, e string
	}{
		{filepath.Join(prefix, "bin", "new"), true, "node", "@fake/new 2.1.332", ">=22.0.0"},
		{filepath.Join(prefix, "bin", "old"), true, "node", "@fake/old 1.0.0", ""},
		{filepath.Join(prefix, "bin", "native"), false, "", "", ""},
		{filepath.Join(home, "bin", "tool"), true, "/usr/bin/node", "", ""},
		{filepath.Join(home, "cli", "run.js"), true, "node", "mine 0.1.0", "^20"},
		{filepath.Join(home, "missing"), false, "", "", ""},
	} {
		p, ok := findNodeProgram(tc.path)
		if ok != tc.ok || p.interp != tc.interp || p.pkg != tc.pkg || p.engines != tc.e {
			t.Errorf("%s: %+v %v; want %v %q %q %q", tc.path, p, ok, tc.ok, tc.interp, tc.pkg, tc.e)
		}
	}
}

// TestNodeCheck runs doctor's agent checks over CLIs installed as npm
// installs them, and a fake node that says which version it is.
func TestNodeCheck(t *testing.T) {
	prefix, nodeDir := t.TempDir(), t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	node := filepath.Join(nodeDir, "node")
	writeFile(t, node, "#!/bin/sh\necho called >>"+calls+"\necho v20.19.2\n", 0o755)
	fakeCLI(t, prefix, "needs22", `{"name": "@fake/needs22", "version": "2.1.332", "engines": {"node": ">=22"}}`, "#!/usr/bin/env node\n")
	fakeCLI(t, prefix, "either", `{"name": "@fake/either", "version": "1.0.0", "engines": {"node": "^20.10 || >=22"}}`, "#!/usr/bin/env node\n")
	fakeCLI(t, prefix, "pinned", `{"name": "@fake/pinned", "version": "1.0.0", "engines": {"node": ">= 22"}}`, "#!"+node+"\n")
	fakeCLI(t, prefix, "odd", `{"name": "@fake/odd", "version": "1.0.0", "engines": {"node": "node 22"}}`, "#!/usr/bin/env node\n")
	fakeCLI(t, prefix, "native", `{"name": "@fake/native", "version": "1.0.0", "engines": {"node": ">=22"}}`, "\x7fELF\x02\x01\x01")
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfgPath, `{"default_agent": "needs22", "profiles": {
		"needs22": {"command": ["needs22"]}, "either": {"command": ["either"]}, "pinned": {"command": ["pinned"]},
		"odd": {"command": ["odd"]}, "native": {"command": ["native"]}}}`, 0o600)
	getenv := mapEnv(map[string]string{"RUNNER_CONFIG": cfgPath})
	cfg, path, err := config.Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Join(prefix, "bin")+string(os.PathListSeparator)+nodeDir)
	checks := func(opts Options) map[string]Check {
		m := map[string]Check{}
		for _, c := range agentChecks(t.Context(), cfg, path, opts) {
			m[c.Name] = c
		}
		return m
	}

	m := checks(Options{Getenv: getenv})
	if c := m["node:needs22"]; c.Status != CheckWarn ||
		c.Detail != "needs22 (@fake/needs22 2.1.332) needs node >=22 (package.json engines), but node v20.19.2 ("+node+") runs it" ||
		c.Fix != "install Node 22 (nvm install 22, or `npm install -g node@22`, or your OS's nodejs 22 package) and make it first in PATH" {
		t.Errorf("too old: %+v", c)
	}
	if c := m["node:either"]; c.Status != CheckOK || !strings.Contains(c.Detail, "node v20.19.2 ("+node+") runs either") {
		t.Errorf("new enough: %+v", c)
	}
	if c := m["node:pinned"]; c.Status != CheckWarn || !strings.Contains(c.Fix, "reinstall pinned with its npm (its script runs "+node+")") {
		t.Errorf("absolute interpreter: %+v", c)
	}
	if c := m["node:odd"]; c.Status != CheckWarn || !strings.Contains(c.Detail, `engines.node "node 22" runner cannot read`) {
		t.Errorf("unreadable range: %+v", c)
	}
	if c, ok := m["node:native"]; ok {
		t.Errorf("a native program has a node check: %+v", c)
	}
	if c := m["agent:needs22"]; c.Status != CheckOK {
		t.Errorf("the agent's own check: %+v", c)
	}
	if Failed(mapValues(m)) {
		t.Error("a node too old fails doctor; it is a warning")
	}
	if raw, _ := os.ReadFile(calls); strings.Count(string(raw), "called") != 1 {
		t.Errorf("node ran %d times for four CLIs, want once", strings.Count(string(raw), "called"))
	}

	// Node 22 first: every check passes.
	m = checks(Options{Getenv: getenv, NodeVersion: func(context.Context, string) (string, error) { return "v22.12.0", nil }})
	for _, name := range []string{"node:needs22", "node:either", "node:pinned"} {
		if c := m[name]; c.Status != CheckOK || !strings.Contains(c.Detail, "node v22.12.0") {
			t.Errorf("node 22: %+v", c)
		}
	}

	// A node that does not say its version.
	m = checks(Options{Getenv: getenv, NodeVersion: func(context.Context, string) (string, error) { return "", errors.New("exit status 127") }})
	if c := m["node:either"]; c.Status != CheckWarn || !strings.Contains(c.Detail, "whose version is unknown: exit status 127") {
		t.Errorf("node fails: %+v", c)
	}

	// No node in PATH.
	t.Setenv("PATH", filepath.Join(prefix, "bin"))
	m = checks(Options{Getenv: getenv})
	if c := m["node:needs22"]; c.Status != CheckWarn || !strings.Contains(c.Detail, "no node is in PATH: it cannot start") ||
		!strings.HasPrefix(c.Fix, "install Node 22 ") {
		t.Errorf("no node: %+v", c)
	}
}

func mapValues(m map[string]Check) []Check {
	var out []Check
	for _, c := range m {
		out = append(out, c)
	}
	return out
}
