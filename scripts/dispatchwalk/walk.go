package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const module = "github.com/runner-cli/runner"

// listed is one package as `go list -deps -export -json` gives it.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	Standard   bool
}

// program is the module's packages parsed and type-checked from source
// (every other package from its export data), with each function's
// declaration by its object.
type program struct {
	fset  *token.FileSet
	info  *types.Info
	decls map[*types.Func]*ast.FuncDecl
	root  string // the module's directory, for relative file names
	pkgs  map[string]*ast.Package
	files map[string][]*ast.File // import path → files
	dirs  map[string]string      // directory → import path
}

// load lists pattern's packages and their dependencies (in dependency
// order) and type-checks the module's from source.
func load(root, pattern string) (*program, error) {
	cmd := exec.Command("go", "list", "-deps", "-export", "-json=ImportPath,Dir,GoFiles,Export,Standard", pattern)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v: %s", pattern, err, stderr.String())
	}
	var all []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list's output: %w", err)
		}
		all = append(all, p)
	}
	exports := map[string]string{}
	for _, p := range all {
		exports[p.ImportPath] = p.Export
	}
	prog := &program{fset: token.NewFileSet(), decls: map[*types.Func]*ast.FuncDecl{}, root: root, files: map[string][]*ast.File{}, dirs: map[string]string{},
		info: &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}}
	gc := importer.ForCompiler(prog.fset, "gc", func(path string) (io.ReadCloser, error) {
		f := exports[path]
		if f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	checked := map[string]*types.Package{}
	imp := importerFunc(func(path string) (*types.Package, error) {
		if p := checked[path]; p != nil {
			return p, nil
		}
		return gc.Import(path)
	})
	for _, p := range all {
		if p.Standard || (p.ImportPath != module && !strings.HasPrefix(p.ImportPath, module+"/")) {
			continue
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(prog.fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		conf := types.Config{Importer: imp}
		pkg, err := conf.Check(p.ImportPath, prog.fset, files, prog.info)
		if err != nil {
			return nil, fmt.Errorf("type-check %s: %w", p.ImportPath, err)
		}
		checked[p.ImportPath] = pkg
		prog.dirs[p.Dir] = p.ImportPath
		prog.files[p.ImportPath] = files
		for _, f := range files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					if fn, ok := prog.info.Defs[fd.Name].(*types.Func); ok {
						prog.decls[fn] = fd
					}
				}
			}
		}
	}
	return prog, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// Stop is one function the walk enters.
type Stop struct {
	Func string // package.Func or package.Type.Method
	File string // relative to the module's root
	Line int
}

// Walk is the walk of a dispatch: its stops in order, and its numbers.
type Walk struct {
	Stops   []Stop
	Files   int // distinct files of the stops
	Returns int // stops in a file left before (not the previous stop's)
}

// walker follows calls from the entry until the target is entered.
type walker struct {
	prog    *program
	ran     func(pos token.Position) bool
	target  string
	reaches map[*types.Func]bool // whether a function is on the way (calls the target)
	enter   map[string]bool      // packages whose every function the walk enters
	seen    map[string]bool
	stops   []Stop
	reached bool
}

// reach reports whether fn is on the way: it is the target, or calls,
// through calls that ran, a function on the way.
func (w *walker) reach(fn *types.Func, decl *ast.FuncDecl) bool {
	if r, ok := w.reaches[fn]; ok {
		return r
	}
	w.reaches[fn] = false // a cycle does not reach it by itself
	r := funcName(fn) == w.target
	for _, c := range w.calls(decl.Body) {
		if r {
			break
		}
		if g, gd := w.callee(c); gd != nil {
			r = w.reach(g, gd)
		}
	}
	w.reaches[fn] = r
	return r
}

// funcName is fn as the walk names it: its package's name, the
// receiver's type, the name.
func funcName(fn *types.Func) string {
	pkg := fn.Pkg().Name()
	if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
		t := sig.Recv().Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := t.(*types.Named); ok {
			return pkg + "." + n.Obj().Name() + "." + fn.Name()
		}
	}
	return pkg + "." + fn.Name()
}

// calls are the calls in body that ran (ran), in the order they end (an
// argument's call before the call it is an argument of).
func (w *walker) calls(body ast.Node) []*ast.CallExpr {
	var out []*ast.CallExpr
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && w.ran(w.prog.fset.Position(c.Lparen)) {
			out = append(out, c)
		}
		return true
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].End() < out[j].End() })
	return out
}

// callee is the function of ours a call calls, with its declaration (nil:
// a builtin, a conversion, a function value, an interface's method, or a
// function of another module).
func (w *walker) callee(c *ast.CallExpr) (*types.Func, *ast.FuncDecl) {
	var id *ast.Ident
	switch f := ast.Unparen(c.Fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	case *ast.IndexExpr: // a generic function instantiated
		if s, ok := f.X.(*ast.SelectorExpr); ok {
			id = s.Sel
		} else if i, ok := f.X.(*ast.Ident); ok {
			id = i
		}
	}
	if id == nil {
		return nil, nil
	}
	fn, ok := w.prog.info.Uses[id].(*types.Func)
	if !ok {
		return nil, nil
	}
	fn = fn.Origin()
	return fn, w.prog.decls[fn]
}

// visit walks the calls of body (a function's, or the entry closure's).
func (w *walker) visit(body ast.Node) {
	for _, c := range w.calls(body) {
		if w.reached {
			return
		}
		fn, decl := w.callee(c)
		if decl == nil {
			continue
		}
		name := funcName(fn)
		if w.seen[name] {
			continue
		}
		w.seen[name] = true
		pos := w.prog.fset.Position(decl.Pos())
		rel, err := filepath.Rel(w.prog.root, pos.Filename)
		if err != nil {
			rel = pos.Filename
		}
		w.stops = append(w.stops, Stop{Func: name, File: rel, Line: pos.Line})
		if name == w.target {
			w.reached = true
			return
		}
		if w.reach(fn, decl) || w.enter[fn.Pkg().Path()] {
			w.visit(decl.Body)
		}
	}
}

// count fills the walk's numbers from its stops.
func count(stops []Stop) Walk {
	wk := Walk{Stops: stops}
	seen := map[string]bool{}
	prev := ""
	for _, s := range stops {
		if s.File != prev && seen[s.File] {
			wk.Returns++
		}
		seen[s.File] = true
		prev = s.File
	}
	wk.Files = len(seen)
	return wk
}

// entry is the RunE closure of the function named cmdFunc (a method of
// cmd/runner's app) that builds the command.
func (p *program) entry(pkg, cmdFunc string) (*ast.FuncLit, error) {
	for _, f := range p.files[pkg] {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != cmdFunc {
				continue
			}
			var lit *ast.FuncLit
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if kv, ok := n.(*ast.KeyValueExpr); ok {
					if k, isID := kv.Key.(*ast.Ident); isID && k.Name == "RunE" {
						lit, _ = kv.Value.(*ast.FuncLit)
					}
				}
				return lit == nil
			})
			if lit != nil {
				return lit, nil
			}
		}
	}
	return nil, fmt.Errorf("no RunE closure in %s.%s", pkg, cmdFunc)
}
