package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// nodeProgram is an agent CLI that node runs: its script's shebang names
// node (`#!/usr/bin/env node`, or node's absolute path), and the npm
// package it belongs to says which node it needs (engines.node).
type nodeProgram struct {
	script string // the resolved file the CLI's command runs
	// interp is node as the shebang names it: "node" (found in PATH by
	// env) or an absolute path.
	interp string
	// pkg is the package's "name version", "" when the script is in no package.
	pkg string
	// engines is the package's engines.node, "" when it asks for none.
	engines string
}

// findNodeProgram says whether the executable at path (found in PATH) is
// a script node runs, and what its package asks of node. A native program
// (Claude Code ships one, replacing its npm package's placeholder at
// install; opencode too) is not one: node does not run it.
func findNodeProgram(path string) (nodeProgram, bool) {
	script, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nodeProgram{}, false
	}
	interp, ok := readShebang(script)
	if !ok || !isNode(interp) {
		return nodeProgram{}, false
	}
	p := nodeProgram{script: script, interp: interp}
	if pj, ok := findPackage(script); ok {
		p.pkg = strings.TrimSpace(pj.Name + " " + pj.Version)
		p.engines = pj.Engines.node()
	}
	return p, true
}

// readShebang returns the program the shebang of file runs, reading
// through env ("#!/usr/bin/env -S node --flag" runs node).
func readShebang(file string) (string, bool) {
	f, err := os.Open(file)
	if err != nil {
		return "", false
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	line, _, _ := bytes.Cut(head[:n], []byte("\n"))
	return shebangProgram(string(line))
}

// shebangProgram is readShebang on the first line.
func shebangProgram(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return "", false
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return "", false
	}
	if filepath.Base(f[0]) != "env" {
		return f[0], true
	}
	// env's options, its NAME=VALUE settings, then the program.
	for i := 1; i < len(f); i++ {
		a := f[i]
		switch {
		case a == "-u" || a == "-C" || a == "--unset" || a == "--chdir":
			i++ // takes the next word
		case strings.HasPrefix(a, "-"), strings.Contains(a, "="):
		default:
			return a, true
		}
	}
	return "", false
}

func isNode(interp string) bool {
	b := filepath.Base(interp)
	return b == "node" || b == "nodejs"
}

// packageJSON is what the node check reads of a package.json.
type packageJSON struct {
	Name    string          `json:"name"`
	Version string          `json:"version"`
	Bin     json.RawMessage `json:"bin"`
	Engines enginesField    `json:"engines"`
	// OptionalDependencies are where a wrapper's platform packages are
	// named (platform.go).
	OptionalDependencies map[string]string `json:"optionalDependencies"`
}

// enginesField is "engines", which old packages wrote as an array.
type enginesField map[string]any

func (e *enginesField) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		*e = m
	}
	return nil
}

func (e enginesField) node() string {
	s, _ := e["node"].(string)
	return strings.TrimSpace(s)
}

// maxPackageDepth bounds the walk from a script up to its package root
// (pi's is dist/cli.js, one level down).
const maxPackageDepth = 8

// findPackage walks up from script to the package.json of the package it
// belongs to: the first one with a name, in a node_modules tree or naming
// script among its "bin". It does not leave a node_modules folder.
func findPackage(script string) (packageJSON, bool) {
	pj, _, ok := findPackageDir(script)
	return pj, ok
}

// findPackageDir is findPackage with the package's folder.
func findPackageDir(script string) (packageJSON, string, bool) {
	dir := filepath.Dir(script)
	for range maxPackageDepth {
		if filepath.Base(dir) == "node_modules" {
			break
		}
		raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
		var pj packageJSON
		if err == nil && json.Unmarshal(raw, &pj) == nil && pj.Name != "" {
			if inNodeModules(dir) || slices.Contains(pj.bins(dir), script) {
				return pj, dir, true
			}
			return packageJSON{}, "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return packageJSON{}, "", false
}

func inNodeModules(dir string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(dir), "/"), "node_modules")
}

// bins are the files the package's "bin" names (a path or a map of them),
// resolved from its root.
func (pj packageJSON) bins(root string) []string {
	var one string
	var many map[string]string
	var paths []string
	if json.Unmarshal(pj.Bin, &one) == nil {
		paths = append(paths, one)
	} else if json.Unmarshal(pj.Bin, &many) == nil {
		for _, p := range many {
			paths = append(paths, p)
		}
	}
	var out []string
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(filepath.Join(root, p)); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// nodeVersions runs `node --version` once for each node (by its resolved
// path) and keeps the answer.
type nodeVersions struct {
	run  func(ctx context.Context, node string) (string, error)
	seen map[string]nodeAnswer
}

type nodeAnswer struct {
	v   semver
	err error
}

func newNodeVersions(run func(ctx context.Context, node string) (string, error)) *nodeVersions {
	if run == nil {
		run = func(ctx context.Context, node string) (string, error) {
			return ReadVersion(ctx, node, []string{"--version"})
		}
	}
	return &nodeVersions{run: run, seen: map[string]nodeAnswer{}}
}

func (n *nodeVersions) version(ctx context.Context, node string) (semver, error) {
	key := node
	if r, err := filepath.EvalSymlinks(node); err == nil {
		key = r
	}
	if a, ok := n.seen[key]; ok {
		return a.v, a.err
	}
	var a nodeAnswer
	out, err := n.run(ctx, node)
	if err != nil {
		a.err = err
	} else {
		a.v, a.err = parseNodeVersion(out)
	}
	n.seen[key] = a
	return a.v, a.err
}

// nodeInstallHint says how to get Node major (or any Node, for major < 0)
// and where it must come first: in PATH for a script that asks env for
// node, else (a script naming node's path) reinstalled with it.
func nodeInstallHint(name string, major int, interp string) string {
	hint := "install Node (nvm install --lts, or `npm install -g node`, or your OS's nodejs package)"
	if major >= 0 {
		hint = fmt.Sprintf("install Node %d (nvm install %d, or `npm install -g node@%d`, or your OS's nodejs %d package)", major, major, major, major)
	}
	if filepath.IsAbs(interp) {
		return hint + " and reinstall " + name + " with its npm (its script runs " + interp + ")"
	}
	return hint + " and make it first in PATH"
}

// nodeCheck is the "node:NAME" line for an installed agent CLI whose
// program node runs: which node runs it and whether that node is one
// its package's engines.node allows. ok is false for any other program.
// A node too old (or none) is a warning, as the agent checks are.
func nodeCheck(ctx context.Context, name, path string, nv *nodeVersions) (Check, bool) {
	p, ok := findNodeProgram(path)
	if !ok {
		return Check{}, false
	}
	c := Check{Name: "node:" + name, Status: CheckOK}
	cli := name
	if p.pkg != "" {
		cli += " (" + p.pkg + ")"
	}
	var r semverRange
	var rangeErr error
	if p.engines != "" {
		r, rangeErr = parseSemverRange(p.engines)
	}
	node := p.interp
	if !filepath.IsAbs(node) {
		found, err := exec.LookPath(node)
		if err != nil {
			c.Status = CheckWarn
			c.Detail = fmt.Sprintf("%s is a Node program (%s) but no %s is in PATH: it cannot start", cli, p.script, node)
			major := -1
			if rangeErr == nil && r != nil {
				major, ok = suggestMajor(r, semver{})
				if !ok {
					major = -1
				}
			}
			c.Fix = nodeInstallHint(name, major, p.interp)
			return c, true
		}
		node = found
	}
	v, err := nv.version(ctx, node)
	if err != nil {
		c.Status = CheckWarn
		c.Detail = fmt.Sprintf("%s runs on %s, whose version is unknown: %v", cli, node, err)
		c.Fix = "check that '" + node + " --version' runs, or reinstall Node"
		return c, true
	}
	runs := fmt.Sprintf("node v%s (%s)", v, node)
	switch {
	case p.engines == "":
		c.Detail = fmt.Sprintf("%s runs %s, which asks for no node version", runs, cli)
	case rangeErr != nil:
		c.Status = CheckWarn
		c.Detail = fmt.Sprintf("%s runs %s, whose engines.node %q runner cannot read", runs, cli, p.engines)
		c.Fix = "check that " + name + " works with node v" + v.String()
	case r.match(v):
		c.Detail = fmt.Sprintf("%s runs %s, which needs node %s (package.json engines)", runs, cli, p.engines)
	default:
		c.Status = CheckWarn
		c.Detail = fmt.Sprintf("%s needs node %s (package.json engines), but %s runs it", cli, p.engines, runs)
		major, ok := suggestMajor(r, v)
		if !ok {
			major = -1
		}
		c.Fix = nodeInstallHint(name, major, p.interp)
	}
	return c, true
}
