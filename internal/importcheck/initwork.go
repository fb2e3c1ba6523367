package importcheck

import (
	"go/ast"
	"go/token"
	"testing"
)

// InitWork fails t for every package-level variable in the non-test Go
// files under root whose value calls one of calls (each "pkg.Func", as
// written: "regexp.MustCompile"). Such a value is computed in the
// package's init, before main, in every runner process (a hook, `runner
// version`, a door call), whether or not the command needs it: make it
// lazy (textutil.LazyRegexp; a function over a sync.Once: a package-level
// sync.OnceValue allocates at init itself).
func InitWork(t testing.TB, root string, calls ...string) (checked int) {
	t.Helper()
	return walkGoFiles(t, root, "", func(fset *token.FileSet, f *ast.File) {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					ast.Inspect(v, func(n ast.Node) bool {
						if _, ok := n.(*ast.FuncLit); ok {
							return false // runs when called, not at init
						}
						call, ok := n.(*ast.CallExpr)
						if !ok {
							return true
						}
						sel, ok := call.Fun.(*ast.SelectorExpr)
						if !ok {
							return true
						}
						pkg, ok := sel.X.(*ast.Ident)
						if !ok {
							return true
						}
						for _, c := range calls {
							if pkg.Name+"."+sel.Sel.Name == c {
								t.Errorf("%s: %s at package level runs in every process's start: make it lazy (textutil.LazyRegexp; a function over a sync.Once, not a package-level sync.OnceValue, which allocates at init)", fset.Position(call.Pos()), c)
							}
						}
						return true
					})
				}
			}
		}
	})
}
