package importcheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// ExitCodesAtEdge fails t for every constant named Exit… declared in the
// non-test Go files under root outside edge (the command package, a path
// relative to root), every os.Exit there, and every exit code written as
// a number there (exitCodeUses: a Code, ExitCode or ExitStatus given,
// compared with or switched on a literal other than 0): exit codes are
// the edge's business, and the packages below return errors of a kind
// (package fault) that the edge maps. Another program's package main
// (scripts/…) is its own edge. It returns how many files it read.
func ExitCodesAtEdge(t testing.TB, root, edge string) (checked int) {
	t.Helper()
	codes := edgeCodes(t, filepath.Join(root, edge))
	return walkGoFiles(t, root, edge, func(fset *token.FileSet, f *ast.File) {
		if f.Name.Name == "main" {
			return
		}
		for _, s := range exitCodeUses(fset, f, codes) {
			t.Errorf("%s below %s: return an error of a kind (package fault) and map it in %s", s, edge, edge)
		}
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

// exitNames are the names (lower-cased) of what holds an exit code: a
// field or variable Code, ExitCode, ExitStatus, and ExitCode().
var exitNames = map[string]bool{"code": true, "exitcode": true, "exitstatus": true, "deadstatus": true}

// exitNamed reports whether e is an exit code by its name: an identifier,
// a selector or a call of a method so named.
func exitNamed(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return exitNames[strings.ToLower(x.Name)]
	case *ast.SelectorExpr:
		return exitNames[strings.ToLower(x.Sel.Name)]
	case *ast.StarExpr:
		return exitNamed(x.X)
	case *ast.ParenExpr:
		return exitNamed(x.X)
	case *ast.CallExpr:
		return len(x.Args) == 0 && exitNamed(x.Fun)
	}
	return false
}

// edgeCodes reads the exit codes the edge declares (its constants
// Exit… = N), but 0 (success, said by every program): the numbers no
// package below it may write as an exit code. Another program's codes
// (ssh's 255, a shell's 127) are not runner's and stay allowed.
func edgeCodes(t testing.TB, dir string) map[string]bool {
	t.Helper()
	codes := map[string]bool{}
	walkGoFiles(t, dir, "", func(_ *token.FileSet, f *ast.File) {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if b, ok := valueAt(vs, i).(*ast.BasicLit); ok && strings.HasPrefix(n.Name, "Exit") && b.Kind == token.INT && b.Value != "0" {
						codes[b.Value] = true
					}
				}
			}
		}
	})
	if len(codes) == 0 {
		t.Fatalf("%s declares no exit code (const ExitX = N): not the edge?", dir)
	}
	return codes
}

func valueAt(vs *ast.ValueSpec, i int) ast.Expr {
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}

// codeLit reports whether e is one of the edge's exit codes written as a
// number.
func codeLit(e ast.Expr, codes map[string]bool) bool {
	if p, ok := e.(*ast.ParenExpr); ok {
		return codeLit(p.X, codes)
	}
	b, ok := e.(*ast.BasicLit)
	return ok && b.Kind == token.INT && codes[b.Value]
}

// exitCodeUses lists, in f, the calls that end the process (os.Exit,
// syscall.Exit, unix.Exit) and the edge's exit codes (codes) written as
// numbers: given
// to, compared with or switched on a thing named as an exit code (Code,
// ExitCode, ExitStatus; exitNames).
func exitCodeUses(fset *token.FileSet, f *ast.File, codes map[string]bool) (found []string) {
	at := func(n ast.Node, what string) {
		found = append(found, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Exit" {
				if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "os" || id.Name == "syscall" || id.Name == "unix") {
					at(x, id.Name+".Exit: return an error of a kind and let the edge exit")
				}
			}
		case *ast.KeyValueExpr:
			if exitNamed(x.Key) && codeLit(x.Value, codes) {
				at(x, "an exit code written as a number")
			}
		case *ast.AssignStmt:
			for i, l := range x.Lhs {
				if i < len(x.Rhs) && exitNamed(l) && codeLit(x.Rhs[i], codes) {
					at(x, "an exit code written as a number")
				}
			}
		case *ast.BinaryExpr:
			if (exitNamed(x.X) && codeLit(x.Y, codes)) || (exitNamed(x.Y) && codeLit(x.X, codes)) {
				at(x, "an exit code compared with a number")
			}
		case *ast.SwitchStmt:
			if x.Tag == nil || !exitNamed(x.Tag) {
				return true
			}
			for _, s := range x.Body.List {
				for _, e := range s.(*ast.CaseClause).List {
					if codeLit(e, codes) {
						at(e, "an exit code switched on as a number")
					}
				}
			}
		}
		return true
	})
	return found
}
