package messaging

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMessagingImportsOnlyLeaves keeps the package doc true: no tmux, no
// process table; only the state's types, exit and textutil.
func TestMessagingImportsOnlyLeaves(t *testing.T) {
	allowed := []string{"state", "runner/exit", "internal/textutil"}
	files, _ := filepath.Glob("*.go")
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
