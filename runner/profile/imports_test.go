package profile

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestProfileImportsOnlyLeaves keeps the package doc true: profile talks
// to no tmux and runs nothing; it imports no package of the module but
// these leaves.
func TestProfileImportsOnlyLeaves(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "internal/transport", "internal/untrusted", "runner/fault")
}

// TestProfileOpensNoFile keeps the package doc true: profile is pure. It
// opens, globs and reads no file (the CLIs' records are runner/spend's;
// the one file a hook chain needs is read by the caller's function), runs
// nothing and reads no environment of its own; of internal/untrusted it
// uses Name alone.
func TestProfileOpensNoFile(t *testing.T) {
	importcheck.None(t, ".", "os", "os/exec", "os/signal", "io/ioutil", "syscall", "net", "net/http")
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			switch {
			case ok && x.Name == "untrusted" && sel.Sel.Name != "Name",
				ok && x.Name == "filepath" && (sel.Sel.Name == "Glob" || sel.Sel.Name == "WalkDir" || sel.Sel.Name == "Walk"):
				t.Errorf("%s: %s.%s: profile opens no file", fset.Position(sel.Pos()), x.Name, sel.Sel.Name)
			}
			return true
		})
	}
}
