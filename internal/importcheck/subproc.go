package importcheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// OneSubprocess fails t for every place in the non-test Go files under
// root, outside helper (a folder relative to root: internal/subproc)
// and scripts/ (the developers' tools, not runner), that starts a child process or ends a process group by itself:
//   - exec.Command, exec.CommandContext, os.StartProcess,
//     syscall.ForkExec or syscall.StartProcess (syscall.Exec replaces
//     this process and starts none: it is not one);
//   - a syscall.SysProcAttr that sets Setpgid or Setsid (a group or a
//     session of its own: the helper's Group and Detached);
//   - a signal to a process group: syscall.Kill or unix.Kill of a
//     negated pid, syscall.Killpg or unix.Killpg.
//
// It returns how many files it read.
func OneSubprocess(t testing.TB, root, helper string) (checked int) {
	t.Helper()
	return walkGoFiles(t, root, helper, func(fset *token.FileSet, f *ast.File) {
		if rel, err := filepath.Rel(root, fset.Position(f.Package).Filename); err == nil && strings.HasPrefix(rel, "scripts"+string(filepath.Separator)) {
			return
		}
		for _, s := range subprocessStarts(fset, f) {
			t.Errorf("%s; only package %s starts a process or ends a process group: use it", s, helper)
		}
	})
}

// subprocessStarts lists, in f, the places OneSubprocess finds.
func subprocessStarts(fset *token.FileSet, f *ast.File) (found []string) {
	at := func(n ast.Node, what string) {
		found = append(found, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			switch name := selectorText(x.Fun); name {
			case "exec.Command", "exec.CommandContext", "os.StartProcess", "syscall.ForkExec", "syscall.StartProcess":
				at(x, name+" starts a process")
			case "syscall.Killpg", "unix.Killpg":
				at(x, name+" signals a process group")
			case "syscall.Kill", "unix.Kill":
				if len(x.Args) > 0 {
					if u, ok := x.Args[0].(*ast.UnaryExpr); ok && u.Op == token.SUB {
						at(x, name+" of a negated pid signals a process group")
					}
				}
			}
		case *ast.KeyValueExpr:
			if k, ok := x.Key.(*ast.Ident); ok && (k.Name == "Setpgid" || k.Name == "Setsid") {
				at(x, k.Name+" puts a child in a group or session of its own")
			}
		case *ast.SelectorExpr:
			if x.Sel.Name == "Setpgid" || x.Sel.Name == "Setsid" {
				at(x, x.Sel.Name+" puts a child in a group or session of its own")
			}
		}
		return true
	})
	return found
}

// selectorText is "pkg.Name" of a call's function pkg.Name, "" for any
// other.
func selectorText(e ast.Expr) string {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return pkg.Name + "." + sel.Sel.Name
}

// OneFlock fails t for every call of syscall.Flock, unix.Flock or
// gofrs/flock's flock.New in the non-test Go files under root outside
// owner (internal/filelock): a lock is taken one way, woken by the
// kernel, with a timeout and a context. It returns how many files it
// read.
func OneFlock(t testing.TB, root, owner string) (checked int) {
	t.Helper()
	return walkGoFiles(t, root, owner, func(fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				switch name := selectorText(c.Fun); name {
				case "syscall.Flock", "unix.Flock", "flock.New", "flock.NewFlock":
					t.Errorf("%s: %s; only package %s takes a flock: use it", fset.Position(c.Pos()), name, owner)
				}
			}
			return true
		})
	})
}
