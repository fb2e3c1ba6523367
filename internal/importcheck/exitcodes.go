package importcheck

import (
	"go/ast"
	"go/token"
	"strings"
	"testing"
)

// ExitCodesAtEdge fails t for every constant named Exit… declared in the
// non-test Go files under root outside edge (the command package, a path
// relative to root): exit codes are the edge's business, and the packages
// below return errors of a kind (package fault) that the edge maps. It
// returns how many files it read.
func ExitCodesAtEdge(t testing.TB, root, edge string) (checked int) {
	t.Helper()
	return walkGoFiles(t, root, edge, func(fset *token.FileSet, f *ast.File) {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if strings.HasPrefix(n.Name, "Exit") {
						t.Errorf("%s: exit code %s declared below %s: return an error of a kind (package fault) and map it in %s", fset.Position(n.Pos()), n.Name, edge, edge)
					}
				}
			}
		}
	})
}
