package importcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// DocNames fails t for every doc comment, in the non-test Go files under
// root, that starts with a word written as code (mixedCaps) other than the
// name it documents: a function, method, type, constant, variable or
// field renamed since, or gone. It returns how many files it read.
func DocNames(t testing.TB, root string) (checked int) {
	t.Helper()
	// A word written as code: mixedCaps (ListProjects, gcTasks), or with
	// an underscore or a digit after its first letter.
	codeWord := regexp.MustCompile(`^[A-Za-z][a-z0-9]*[A-Z_0-9][A-Za-z0-9_]*$`)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		checked++
		check := func(doc *ast.CommentGroup, names ...*ast.Ident) {
			if doc == nil || len(names) == 0 {
				return
			}
			first, _, _ := strings.Cut(strings.TrimSpace(doc.Text()), " ")
			first = strings.TrimRight(first, ".,:;")
			if !codeWord.MatchString(first) {
				return
			}
			for _, n := range names {
				if n.Name == first {
					return
				}
			}
			t.Errorf("%s: the doc comment of %s starts with %s, which it is not: renamed or gone?", fset.Position(doc.Pos()), names[0].Name, first)
		}
		for _, d := range f.Decls { // the package's names, not a function's statements
			ast.Inspect(d, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.FuncDecl:
					check(x.Doc, x.Name)
					return false
				case *ast.GenDecl:
					if !x.Lparen.IsValid() && len(x.Specs) == 1 {
						check(x.Doc, specNames(x.Specs[0])...)
					}
				case *ast.TypeSpec:
					check(x.Doc, x.Name)
				case *ast.ValueSpec:
					check(x.Doc, x.Names...)
				case *ast.Field:
					check(x.Doc, x.Names...)
				case *ast.FuncLit:
					return false
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return checked
}

func specNames(s ast.Spec) []*ast.Ident {
	switch x := s.(type) {
	case *ast.TypeSpec:
		return []*ast.Ident{x.Name}
	case *ast.ValueSpec:
		return x.Names
	}
	return nil
}
