// Package importcheck is a test helper that holds the module's code to
// rules read from its syntax: a package to the imports its doc claims
// (Only, None), no process started but through internal/subproc
// (OneSubprocess), no function over a length (LongFunctions:
// TestNoLongFunctions), no exit code outside cmd/runner (ExitCodesAtEdge),
// no shell script built from a value (ShellScripts), and no regexp
// compiled before main (InitWork: TestNoInitWork).
package importcheck

import (
	"go/parser"
	"go/token"
	"iter"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Module is the module's import path.
const Module = "github.com/runner-cli/runner/"

// Only fails t for each import of the module, in the non-test files of
// dir, that is not in allowed (module-relative paths, e.g. "state").
// internal/clock, the module's one clock, and internal/subproc, its one
// way to start a process (OneSubprocess), are allowed everywhere.
func Only(t testing.TB, dir string, allowed ...string) {
	t.Helper()
	allowed = append(allowed, "internal/clock", "internal/subproc")
	for f, p := range imports(t, dir) {
		if rel, ok := strings.CutPrefix(p, Module); ok && !slices.Contains(allowed, rel) {
			t.Errorf("%s imports %s: only %v are allowed", f, p, allowed)
		}
	}
}

// None fails t for each import in the non-test files of dir that is in
// banned (full paths: "os", "os/exec").
func None(t testing.TB, dir string, banned ...string) {
	t.Helper()
	for f, p := range imports(t, dir) {
		if slices.Contains(banned, p) {
			t.Errorf("%s imports %s, which the package's doc rules out", f, p)
		}
	}
}

// imports yields each non-test Go file of dir with each path it imports.
func imports(t testing.TB, dir string) iter.Seq2[string, string] {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	fset := token.NewFileSet()
	return func(yield func(string, string) bool) {
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if !yield(f, p) {
					return
				}
			}
		}
	}
}
