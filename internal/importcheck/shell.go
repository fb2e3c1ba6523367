package importcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ShellWrapper is a function that runs its parameter Param through
// "sh -c": its call sites must give constant text at argument Arg.
type ShellWrapper struct {
	Name  string // the method or function name, e.g. "sh"
	Param string // the parameter that reaches sh -c, e.g. "script"
	Arg   int    // its index among the call's arguments
}

// ShellScripts fails t for every "sh", "-c", SCRIPT in the non-test Go
// files under root whose SCRIPT is not constant text (a string literal, a
// sum of them, or a constant) — so no task text, project name or message
// can become shell syntax; values go as positional arguments ("$1"). A
// wrapper's parameter is allowed where it reaches sh -c, and its call
// sites are held to the same rule.
func ShellScripts(t testing.TB, root string, wrappers ...ShellWrapper) {
	t.Helper()
	fset := token.NewFileSet()
	consts := packageConsts(t, root)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var args []ast.Expr
			switch x := n.(type) {
			case *ast.CallExpr:
				args = x.Args
				if name := calleeName(x.Fun); name != "" {
					for _, w := range wrappers {
						if name == w.Name && w.Arg < len(x.Args) && !constText(x.Args[w.Arg], consts[filepath.Dir(p)]) {
							t.Errorf("%s: %s(…) is given a script that is not constant text", fset.Position(x.Pos()), name)
						}
					}
				}
			case *ast.CompositeLit:
				args = x.Elts
			default:
				return true
			}
			for i := 0; i+2 < len(args); i++ {
				if lit(args[i]) != "sh" || lit(args[i+1]) != "-c" {
					continue
				}
				s := args[i+2]
				if constText(s, consts[filepath.Dir(p)]) {
					continue
				}
				if id, ok := s.(*ast.Ident); ok && isWrapperParam(id.Name, wrappers) {
					continue
				}
				t.Errorf("%s: sh -c runs a script that is not constant text", fset.Position(s.Pos()))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func calleeName(e ast.Expr) string {
	switch f := e.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

func lit(e ast.Expr) string {
	if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
		s, _ := strconv.Unquote(b.Value)
		return s
	}
	return "\x00"
}

// constText reports whether e is a string literal, a sum of constant
// texts, or a constant: of the function or the file (the parser resolves
// those), or of the package (pkg: its file-level constants).
func constText(e ast.Expr, pkg map[string]bool) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Kind == token.STRING
	case *ast.BinaryExpr:
		return x.Op == token.ADD && constText(x.X, pkg) && constText(x.Y, pkg)
	case *ast.ParenExpr:
		return constText(x.X, pkg)
	case *ast.Ident:
		if x.Obj != nil {
			return x.Obj.Kind == ast.Con
		}
		return pkg[x.Name]
	}
	return false
}

// packageConsts maps each directory under root to the names of the
// constants its non-test files declare at file level.
func packageConsts(t testing.TB, root string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						if out[filepath.Dir(p)] == nil {
							out[filepath.Dir(p)] = map[string]bool{}
						}
						out[filepath.Dir(p)][n.Name] = true
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func isWrapperParam(name string, wrappers []ShellWrapper) bool {
	for _, w := range wrappers {
		if w.Param == name {
			return true
		}
	}
	return false
}
