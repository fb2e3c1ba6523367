package importcheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ProgramOwner fails t for every place in the non-test Go files under
// root, outside owner (a folder relative to root: the one package that
// may run program, such as tmuxctl for tmux and gitsnap for git), that
// runs program or hands it to something that runs it (programUses):
//   - subproc.Command, subproc.Group, subproc.Detached,
//     subproc.Interactive, exec.Command, exec.CommandContext or
//     syscall.Exec whose program is program: written there, or through a constant, a variable or the
//     first word of a []string the package binds to it, or the argv a
//     function of owner returns (one whose result is a []string, such as
//     tmuxctl's AttachArgv): owner runs what it builds;
//   - program as an argument of any other call (a helper that runs its
//     arguments, a transport's Run or Command; but for the packages that
//     only handle text, pureCallee), as a word of a []string, or as an
//     element of one (argv[0] = program: an argv built for later);
//   - a shell script (the text after "-c", run by sh here or on a host)
//     that runs program as a command (shellRunsRE).
//
// It returns how many files it read.
func ProgramOwner(t testing.TB, root, program, owner string) (checked int) {
	t.Helper()
	argvFuncs := ownerArgvFuncs(t, filepath.Join(root, owner))
	binds := map[string]map[string][]ast.Expr{}
	walkGoFiles(t, root, owner, func(fset *token.FileSet, f *ast.File) {
		dir := filepath.Dir(fset.Position(f.Package).Filename)
		if binds[dir] == nil {
			binds[dir] = map[string][]ast.Expr{}
		}
		collectBinds(f, binds[dir])
	})
	return walkGoFiles(t, root, owner, func(fset *token.FileSet, f *ast.File) {
		dir := filepath.Dir(fset.Position(f.Package).Filename)
		for _, s := range programUses(fset, f, program, binds[dir], argvFuncs) {
			t.Errorf("%s; only package %s may run %s: add a function there", s, owner, program)
		}
	})
}

// collectBinds records, by name, what the package binds names to: its
// constants and variables, and each := or = of a function.
func collectBinds(f *ast.File, binds map[string][]ast.Expr) {
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ValueSpec:
			for i, name := range x.Names {
				if i < len(x.Values) {
					binds[name.Name] = append(binds[name.Name], x.Values[i])
				}
			}
		case *ast.AssignStmt:
			if len(x.Lhs) != len(x.Rhs) {
				return true
			}
			for i, l := range x.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					binds[id.Name] = append(binds[id.Name], x.Rhs[i])
				}
			}
		}
		return true
	})
}

// shellRunsRE finds a command word program in a shell script: at the
// start of a line or after ; & | ( $( or a keyword (then, do, else, exec,
// time, !), followed by a blank.
func shellRunsRE(program string) *regexp.Regexp {
	return regexp.MustCompile(`(^|\n|[;&|(]|\$\(|\b(then|do|else|exec|time|nohup|env)\s|!\s)\s*` + regexp.QuoteMeta(program) + `[ \t]`)
}

// programUses lists, in f, the places that run program (ProgramOwner).
func programUses(fset *token.FileSet, f *ast.File, program string, binds map[string][]ast.Expr, argvFuncs map[string]bool) (found []string) {
	shell := shellRunsRE(program)
	at := func(n ast.Node, what string) {
		found = append(found, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	is := func(e ast.Expr) bool { return names(e, program, binds, 0) }
	script := func(args []ast.Expr) {
		for i := 0; i+1 < len(args); i++ {
			if lit(args[i]) == "-c" {
				for _, text := range texts(args[i+1], binds, 0) {
					if shell.MatchString(text) {
						at(args[i+1], "a shell script that runs "+program)
						break
					}
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			script(x.Args)
			if i := programArg(x); i >= 0 && i < len(x.Args) {
				if is(x.Args[i]) {
					at(x, "runs "+program)
				} else if name := ownerArgv(x.Args[i], binds, argvFuncs, 0); name != "" {
					at(x, "runs the argv of "+name+" (a "+program+" command)")
				}
				return true
			}
			if pureCallee(x.Fun) {
				return true
			}
			for _, a := range x.Args {
				if is(a) {
					at(a, program+" handed to "+exprText(x.Fun)+", which may run it")
					break
				}
			}
		case *ast.AssignStmt:
			for i, r := range x.Rhs {
				if _, idx := x.Lhs[min(i, len(x.Lhs)-1)].(*ast.IndexExpr); idx && is(r) {
					at(r, "an argv given "+program)
				}
			}
		case *ast.CompositeLit:
			script(x.Elts)
			if !stringSlice(x.Type) {
				return true
			}
			for _, e := range x.Elts {
				if is(e) {
					at(e, "an argv holding "+program)
					break
				}
			}
		}
		return true
	})
	return found
}

// pureCallee reports whether fun only handles text (strings.HasPrefix,
// fmt.Sprintf…): a program's name given to it runs nothing.
func pureCallee(fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	switch pkg.Name {
	case "strings", "fmt", "errors", "filepath", "path", "slices", "bytes", "regexp", "strconv", "slog", "log", "exec":
		// exec: LookPath only finds the program.
		return true
	}
	return false
}

func stringSlice(e ast.Expr) bool {
	at, ok := e.(*ast.ArrayType)
	if !ok {
		return false
	}
	id, ok := at.Elt.(*ast.Ident)
	return ok && id.Name == "string"
}

// texts are the strings e can hold: a literal, a sum of them, or what a
// name is bound to.
func texts(e ast.Expr, binds map[string][]ast.Expr, depth int) []string {
	if depth > 4 {
		return nil
	}
	switch x := e.(type) {
	case *ast.BasicLit:
		if s := lit(x); s != "\x00" {
			return []string{s}
		}
	case *ast.ParenExpr:
		return texts(x.X, binds, depth+1)
	case *ast.BinaryExpr:
		var out []string
		for _, l := range texts(x.X, binds, depth+1) {
			for _, r := range texts(x.Y, binds, depth+1) {
				out = append(out, l+r)
			}
		}
		if out == nil { // a part not known: each known part alone
			out = append(texts(x.X, binds, depth+1), texts(x.Y, binds, depth+1)...)
		}
		return out
	case *ast.Ident:
		var out []string
		for _, b := range binds[x.Name] {
			out = append(out, texts(b, binds, depth+1)...)
		}
		return out
	}
	return nil
}

// ownerArgvFuncs are the functions and methods of the owner's package
// that return a []string (an argv it builds to be run, such as
// tmuxctl.Client.AttachArgv).
func ownerArgvFuncs(t testing.TB, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	walkGoFiles(t, dir, "", func(_ *token.FileSet, f *ast.File) {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Type.Results == nil || !ast.IsExported(fd.Name.Name) {
				continue
			}
			for _, r := range fd.Type.Results.List {
				if stringSlice(r.Type) {
					out[fd.Name.Name] = true
				}
			}
		}
	})
	return out
}

// ownerArgv is the name of the owner's function whose argv e is the
// program of (argv[0], or a name bound to it), "" for none.
func ownerArgv(e ast.Expr, binds map[string][]ast.Expr, argvFuncs map[string]bool, depth int) string {
	if depth > 4 {
		return ""
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		return ownerArgv(x.X, binds, argvFuncs, depth+1)
	case *ast.ParenExpr:
		return ownerArgv(x.X, binds, argvFuncs, depth+1)
	case *ast.CallExpr:
		if name := calleeName(x.Fun); argvFuncs[name] {
			return name
		}
	case *ast.Ident:
		for _, b := range binds[x.Name] {
			if name := ownerArgv(b, binds, argvFuncs, depth+1); name != "" {
				return name
			}
		}
	}
	return ""
}

// programArg is the index of the program among the arguments of a call
// that starts it: internal/subproc's Command, Group, Detached and
// Interactive (the one way in, importcheck.OneSubprocess), and
// exec.Command, exec.CommandContext, syscall.Exec or unix.Exec (-1:
// none of those).
func programArg(c *ast.CallExpr) int {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return -1
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return -1
	}
	switch pkg.Name + "." + sel.Sel.Name {
	case "exec.Command", "syscall.Exec", "unix.Exec", "subproc.Detached", "subproc.Interactive":
		return 0
	case "exec.CommandContext", "subproc.Command", "subproc.Group":
		return 1
	}
	return -1
}

// names reports whether e can be program: a string that is program or a
// path to it, a name the package binds to one, the first word of a
// []string that is one, or that []string's first element (argv[0]).
func names(e ast.Expr, program string, binds map[string][]ast.Expr, depth int) bool {
	if depth > 4 {
		return false
	}
	switch x := e.(type) {
	case *ast.BasicLit:
		s := lit(x)
		return s == program || (strings.Contains(s, "/") && path.Base(s) == program)
	case *ast.ParenExpr:
		return names(x.X, program, binds, depth+1)
	case *ast.Ident:
		for _, b := range binds[x.Name] {
			if names(b, program, binds, depth+1) {
				return true
			}
		}
	case *ast.IndexExpr:
		return names(x.X, program, binds, depth+1)
	case *ast.CompositeLit:
		return len(x.Elts) > 0 && names(x.Elts[0], program, binds, depth+1)
	}
	return false
}

func exprText(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprText(x.X) + "." + x.Sel.Name
	case *ast.CallExpr:
		return exprText(x.Fun) + "(…)"
	}
	return "a function"
}
