package procinfo

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// linuxOnly are the calls, types and constants of x/sys/unix and syscall
// that exist on Linux alone: a file that uses one builds for Linux only.
var linuxOnly = map[string]bool{
	"PidfdOpen": true, "PidfdSendSignal": true, "PidfdGetfd": true,
	"SchedSetAttr": true, "SchedGetAttr": true, "SchedAttr": true, "SCHED_IDLE": true, "SizeofSchedAttr": true,
	"GetsockoptUcred": true, "SO_PEERCRED": true, "Ucred": true,
	"Syncfs": true, "InotifyInit": true, "InotifyInit1": true, "InotifyAddWatch": true,
	"Prctl": true, "Unshare": true, "Setns": true, "PivotRoot": true, "Signalfd": true,
	"EpollCreate": true, "EpollCreate1": true, "EpollCtl": true, "EpollWait": true,
	"FanotifyInit": true, "FanotifyMark": true, "IoprioSet": true, "Capget": true, "Capset": true,
	"CLONE_NEWUSER": true, "CLONE_NEWPID": true, "CLONE_NEWNS": true, "PR_SET_PDEATHSIG": true,
}

// linuxFile reports whether f builds for Linux alone: its name says so
// (_linux.go, _linux_ARCH.go), or its //go:build line does.
func linuxFile(name string, f *ast.File) bool {
	base := strings.TrimSuffix(filepath.Base(name), ".go")
	if strings.HasSuffix(base, "_linux") || strings.Contains(base, "_linux_") {
		return true
	}
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				continue
			}
			if !expr.Eval(func(tag string) bool { return tag == "darwin" || tag == "unix" }) &&
				!expr.Eval(func(tag string) bool { return tag == "freebsd" || tag == "unix" }) {
				return true
			}
		}
	}
	return false
}

// platformFacts lists, in the non-test Go files under root, the reads of
// /proc (a call given a path in it) and the uses of Linux-only calls
// outside files that build for Linux alone and outside this package.
func platformFacts(t *testing.T, root string) (found []string, checked int) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules":
				return filepath.SkipDir
			}
			if rel, _ := filepath.Rel(root, p); rel == filepath.Join("internal", "procinfo") {
				return filepath.SkipDir // the seam itself
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		checked++
		if linuxFile(p, f) {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				for _, a := range x.Args {
					if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil && (s == "/proc" || strings.HasPrefix(s, "/proc/")) {
							found = append(found, fset.Position(lit.Pos()).String()+": reads "+s)
						}
					}
				}
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && (id.Name == "unix" || id.Name == "syscall") && linuxOnly[x.Sel.Name] {
					found = append(found, fset.Position(x.Pos()).String()+": "+id.Name+"."+x.Sel.Name+" is Linux only")
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found, checked
}

// TestOneSeam: no file outside a Linux-only file and this package reads
// /proc or calls what Linux alone has, so the build for macOS is the
// build that runs there (a /proc read compiles everywhere and fails only
// on the Mac).
func TestOneSeam(t *testing.T) {
	found, checked := platformFacts(t, "../..")
	if checked < 100 {
		t.Fatalf("only %d Go files checked: not the module's root?", checked)
	}
	for _, f := range found {
		t.Error(f + " (a platform fact belongs in internal/procinfo, or in a _linux.go file with a counterpart for the other systems)")
	}
}

// TestOneSeamCatches: the check finds what it is for.
func TestOneSeamCatches(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := writeFile(filepath.Join(dir, name), src); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package a\nimport (\"fmt\"; \"os\"; \"golang.org/x/sys/unix\")\nfunc f() { os.ReadFile(fmt.Sprintf(\"/proc/%d/stat\", 1)); os.ReadDir(\"/proc\"); unix.PidfdOpen(1, 0) }\n")
	write("b_linux.go", "package a\nimport \"os\"\nfunc g() { os.ReadFile(\"/proc/loadavg\") }\n")
	write("c.go", "//go:build linux\n\npackage a\nimport \"os\"\nfunc h() { os.ReadFile(\"/proc/loadavg\") }\n")
	write("d.go", "//go:build linux || darwin\n\npackage a\nimport \"os\"\nfunc i() { os.ReadFile(\"/proc/self/stat\") }\n")
	write("e.go", "package a\nvar bwrapArgs = []string{\"--proc\", \"/proc\"}\n")
	for i := 0; i < 100; i++ {
		write("pad"+strconv.Itoa(i)+".go", "package a\n")
	}
	found, _ := platformFacts(t, dir)
	got := strings.Join(found, "\n")
	for _, want := range []string{"a.go:3:36: reads /proc/%d/stat", "a.go:3:69: reads /proc\n", "unix.PidfdOpen is Linux only", "d.go:5:24: reads /proc/self/stat"} {
		if !strings.Contains(got, want) {
			t.Errorf("not found: %s; found:\n%s", want, got)
		}
	}
	if len(found) != 4 {
		t.Errorf("found %d, want 4:\n%s", len(found), got)
	}
}
