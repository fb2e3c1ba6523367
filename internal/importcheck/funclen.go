package importcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// LongFunctions fails t for every function or method in the non-test Go
// files under root (testdata and .git left out) longer than max lines,
// from its signature to its closing brace: a function of logic that long
// holds more than one thing, and reads better as its parts.
func LongFunctions(t testing.TB, root string, max int) (checked int) {
	t.Helper()
	return walkGoFiles(t, root, "", func(fset *token.FileSet, f *ast.File) {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > max {
				t.Errorf("%s: %s is %d lines (at most %d: split it into its parts)", fset.Position(fn.Pos()), fn.Name.Name, n, max)
			}
		}
	})
}

// walkGoFiles parses each non-test Go file under root (testdata,
// node_modules, .git and the directory skip, relative to root, left out)
// and gives it to fn; it returns how many it read.
func walkGoFiles(t testing.TB, root, skip string, fn func(*token.FileSet, *ast.File)) (checked int) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules" || (skip != "" && rel == skip)) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		checked++
		fn(fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return checked
}
