package profile

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestProfileImportsOnlyLeaves keeps the package doc true: profile talks
// to no tmux and runs nothing; it imports no package of the module but
// these leaves.
func TestProfileImportsOnlyLeaves(t *testing.T) {
	checkImports(t, ".", []string{"internal/textutil", "internal/transport", "runner/exit"})
}

// checkImports fails for an import of the module from dir's non-test files
// that is not in allowed (module-relative paths).
func checkImports(t *testing.T, dir string, allowed []string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	fset := token.NewFileSet()
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
			if rel, ok := strings.CutPrefix(p, "github.com/runner-cli/runner/"); ok && !slices.Contains(allowed, rel) {
				t.Errorf("%s imports %s: only %v are allowed", f, p, allowed)
			}
		}
	}
}
