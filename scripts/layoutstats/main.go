// Command layoutstats prints the numbers the layout issues measure, from
// the code's own syntax: lines of each package (non-test files), the
// functions over 80 lines, the functions taking *runner.Env by package,
// the methods of runner.Env (TestEnvMethods holds them),
// the packages below cmd that define exit codes (constants named Exit…), and the packages without a doc
// comment.
//
// usage: go run ./scripts/layoutstats [ROOT]
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const module = "github.com/runner-cli/runner/"

// stats are the numbers of one walk of the tree.
type stats struct {
	lines         map[string]int  // package dir → lines of its non-test files
	envFuncs      map[string]int  // package dir → functions taking *Env
	envMethods    []string        // the methods of runner.Env
	exitImporters map[string]bool // package dirs below cmd defining Exit… constants
	hasDoc        map[string]bool // package dir → has a doc comment
	longs         []long          // functions over 80 lines
}

// long is a function over 80 lines.
type long struct {
	name string
	n    int
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	st := &stats{lines: map[string]int{}, envFuncs: map[string]int{}, exitImporters: map[string]bool{}, hasDoc: map[string]bool{}}
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
		return st.file(fset, p)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	st.report(root)
}

// file adds one Go file's numbers.
func (st *stats) file(fset *token.FileSet, p string) error {
	src, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	f, err := parser.ParseFile(fset, p, src, parser.ParseComments)
	if err != nil {
		return err
	}
	pkg := filepath.Dir(p)
	st.lines[pkg] += strings.Count(string(src), "\n")
	if f.Doc != nil {
		st.hasDoc[pkg] = true
	} else if _, ok := st.hasDoc[pkg]; !ok {
		st.hasDoc[pkg] = false
	}
	if !strings.HasPrefix(pkg, "cmd") {
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, spec := range gd.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						if strings.HasPrefix(n.Name, "Exit") {
							st.exitImporters[pkg] = true
						}
					}
				}
			}
		}
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > 80 {
			name := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) > 0 {
				name = types(fn.Recv.List[0].Type) + "." + name
			}
			st.longs = append(st.longs, long{pkg + ": " + name, n})
		}
		if takesEnv(fn) {
			st.envFuncs[pkg]++
		}
		if fn.Recv != nil && filepath.Base(pkg) == "runner" && !strings.HasPrefix(pkg, "cmd") && strings.TrimPrefix(types(fn.Recv.List[0].Type), "*") == "Env" {
			st.envMethods = append(st.envMethods, fn.Name.Name)
		}
	}
	return nil
}

// takesEnv reports whether fn has a *Env (or *runner.Env) receiver or
// parameter.
func takesEnv(fn *ast.FuncDecl) bool {
	params := fn.Type.Params.List
	if fn.Recv != nil {
		params = append(append([]*ast.Field(nil), fn.Recv.List...), params...)
	}
	for _, fld := range params {
		if t := types(fld.Type); t == "*Env" || t == "*runner.Env" {
			return true
		}
	}
	return false
}

// report prints the numbers.
func (st *stats) report(root string) {
	fmt.Printf("root package (runner/): %d lines\n", st.lines[filepath.Join(root, "runner")])
	sort.Slice(st.longs, func(i, j int) bool { return st.longs[i].n > st.longs[j].n })
	fmt.Printf("functions over 80 lines: %d\n", len(st.longs))
	for _, l := range st.longs {
		fmt.Printf("  %4d %s\n", l.n, l.name)
	}
	total := 0
	var pkgs []string
	for p, n := range st.envFuncs {
		total += n
		pkgs = append(pkgs, fmt.Sprintf("%s %d", p, n))
	}
	sort.Strings(pkgs)
	fmt.Printf("functions taking *Env: %d\n  %s\n", total, strings.Join(pkgs, "\n  "))
	sort.Strings(st.envMethods)
	fmt.Printf("methods of runner.Env: %d %s\n", len(st.envMethods), strings.Join(st.envMethods, " "))
	fmt.Printf("packages below cmd defining exit codes: %d\n  %s\n", len(st.exitImporters), strings.Join(sortedKeys(st.exitImporters, true), "\n  "))
	nodoc := sortedKeys(st.hasDoc, false)
	fmt.Printf("packages without a doc comment: %d %s\n", len(nodoc), strings.Join(nodoc, " "))
}

// sortedKeys returns the keys of m whose value is want, sorted.
func sortedKeys(m map[string]bool, want bool) []string {
	var out []string
	for k, v := range m {
		if v == want {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// types renders a parameter's type expression.
func types(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return "*" + types(t.X)
	case *ast.SelectorExpr:
		return types(t.X) + "." + t.Sel.Name
	case *ast.IndexExpr:
		return types(t.X)
	}
	return "?"
}
