package testenv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestScrub(t *testing.T) {
	t.Setenv("RUNNER_STATE_DIR", "/nowhere")
	t.Setenv("XDG_STATE_HOME", "/nowhere")
	t.Setenv("TMUX", "/tmp/tmux-0/default,1,0")
	t.Setenv("GIT_DIR", "/nowhere/.git")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("RUNNERX", "kept")
	t.Setenv("RUNNER_BENCH_BIN", "/kept/runner")
	t.Setenv("RUNNER_REAL_AGENTS_REQUIRED", "1")
	Scrub()
	for _, k := range []string{"RUNNER_STATE_DIR", "XDG_STATE_HOME", "TMUX", "GIT_DIR", "GIT_CONFIG_KEY_0"} {
		if v, ok := os.LookupEnv(k); ok {
			t.Errorf("%s=%s survived", k, v)
		}
	}
	if os.Getenv("RUNNERX") != "kept" {
		t.Error("RUNNERX was removed: only the RUNNER_ prefix goes")
	}
	for _, k := range []string{"RUNNER_BENCH_BIN", "RUNNER_REAL_AGENTS_REQUIRED"} {
		if os.Getenv(k) == "" {
			t.Errorf("the tests' own %s was removed", k)
		}
	}
}

// TestEveryPackageScrubs: every folder of the module with tests has a
// TestMain that goes through this package, so no test sees the caller's
// settings.
func TestEveryPackageScrubs(t *testing.T) {
	root := filepath.Join("..", "..")
	withTests := map[string]bool{}
	scrubs := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		dir := filepath.Dir(p)
		withTests[dir] = true
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "TestMain" || fn.Recv != nil {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "testenv" {
						scrubs[dir] = true
					}
				}
				return true
			})
			if dir == "." { // this package calls Main by its own name
				scrubs[dir] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(withTests) < 20 {
		t.Fatalf("found tests in only %d folders", len(withTests))
	}
	for dir := range withTests {
		if !scrubs[dir] && filepath.Base(dir) != "testenv" {
			t.Errorf("%s: no TestMain calling testenv.Main or testenv.Scrub", dir)
		}
	}
}
