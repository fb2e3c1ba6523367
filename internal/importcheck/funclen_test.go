package importcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoLongFunctions holds the module to functions of at most 80 lines.
func TestNoLongFunctions(t *testing.T) {
	if n := LongFunctions(t, "../..", 80); n < 100 {
		t.Fatalf("only %d files checked: not the module's root?", n)
	}
}

func TestLongFunctionsCatches(t *testing.T) {
	dir := t.TempDir()
	long := "package a\n\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", 80) + "}\n\nfunc short() {}\n"
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(long), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a_test.go"), []byte(long), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &fakeT{TB: t}
	LongFunctions(f, dir, 80)
	if f.errors != 1 {
		t.Errorf("%d errors, want 1 (long, in a.go only)", f.errors)
	}
}

// TestExitCodesAtEdge holds the exit codes to cmd/runner.
func TestExitCodesAtEdge(t *testing.T) {
	if n := ExitCodesAtEdge(t, "../..", "cmd/runner"); n < 100 {
		t.Fatalf("only %d files checked: not the module's root?", n)
	}
}

func TestExitCodesAtEdgeCatches(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"cmd/x", "lib", "tool"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	edge := "package main\n\nconst (\n\tExitOK = 0\n\tExitBusy = 5\n\tOther = 1\n)\n\nfunc f(code int) { os.Exit(5) }\n"
	src := "package a\n\nconst (\n\tExitOK = 0\n\tOther = 1\n)\n"
	// Each marked line is one error (five), the others none: 255 and 127
	// are not the edge's codes, 0 is success, 5 is no exit code unnamed.
	uses := `package a

type R struct{ Code int }

func f(r *R, ee interface{ ExitCode() int }, code int) R {
	os.Exit(1)                  // error
	r.Code = 5                  // error
	if ee.ExitCode() == 5 {     // error
	}
	switch code {
	case 5:                     // error
	case 255, 127:
	}
	if ee.ExitCode() == 255 || r.Code == 0 || len("x") == 5 {
	}
	return R{Code: 5}           // error
}
`
	main := "package main\n\nfunc main() { os.Exit(5) }\n"
	for p, text := range map[string]string{"cmd/x/a.go": edge, "lib/a.go": src, "lib/a_test.go": src + "func g() { os.Exit(5) }\n",
		"lib/uses.go": uses, "tool/main.go": main} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f := &fakeT{TB: t}
	ExitCodesAtEdge(f, dir, "cmd/x")
	if f.errors != 6 {
		t.Errorf("%d errors, want 6 (ExitOK in lib/a.go, five in lib/uses.go)", f.errors)
	}
}

// TestRootPackageSize holds the root package (runner/: the orchestration
// of a task's life) to 3 000 lines (issue 40): the decisions live below it.
func TestRootPackageSize(t *testing.T) {
	// 2 999 lines before issue 55 moved the dispatch's plan and launch
	// out (2 423 after): held near what it is, so that they do not creep
	// back.
	if n := PackageTooLarge(t, "../../runner", 2600); n < 1000 {
		t.Fatalf("only %d lines read: not the root package?", n)
	}
}

// maxCmdLines bounds package main (cmd/runner): flags, output and exit
// codes. It was 8 860 lines before the orchestration moved out, 7 238
// after (what was left mostly the commands' help, flags and output), and
// 4 980 once the self-contained command families moved to packages of
// their own under cmd/runner/internal (tmuxcmd, statecmd, snapshotcmd,
// hostcmd, agentscmd, over cmdkit's Factory), 4 871 once a group's
// setup, its candidates' planning, gc's start and diff's steps moved to
// runner/group, gc and worktree. Held just above that (issue 55 §3 asks
// 5 000); lower it as more moves out; never raise it.
const maxCmdLines = 4900

// TestCmdPackageSize holds cmd/runner to maxCmdLines lines.
func TestCmdPackageSize(t *testing.T) {
	if n := PackageTooLarge(t, "../../cmd/runner", maxCmdLines); n < 3000 {
		t.Fatalf("only %d lines read: not cmd/runner?", n)
	}
}

// maxEnvMethods bounds the methods of runner.Env (issue 55 §5 and §7:
// it grew back from 10 to 14; the host pool's Conn and GitOn are called
// on env.Hosts, not forwarded by the Env).
const maxEnvMethods = 10

// TestEnvMethods holds runner.Env to maxEnvMethods methods: what the
// core needs of the outside world, not every operation (a package's
// Deps or a function takes the rest).
func TestEnvMethods(t *testing.T) {
	names := Methods(t, "../../runner", "Env")
	if len(names) < 5 {
		t.Fatalf("only %d methods of Env found (%v): not the root package?", len(names), names)
	}
	if len(names) > maxEnvMethods {
		t.Errorf("runner.Env has %d methods, over %d: %v; give the new one to the type it belongs to (hosts.Pool, a package's Deps) or make it a function", len(names), maxEnvMethods, names)
	}
}

func TestMethodsCatches(t *testing.T) {
	dir := t.TempDir()
	src := "package a\n\ntype E struct{}\n\nfunc (e *E) A() {}\nfunc (E) b() {}\nfunc (x *X) C() {}\nfunc D(e *E) {}\n"
	for _, p := range []string{"a.go", "a_test.go"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := Methods(t, dir, "E"); strings.Join(got, ",") != "A,b" {
		t.Errorf("Methods: %v, want [A b]", got)
	}
}

func TestPackageTooLargeCatches(t *testing.T) {
	dir := t.TempDir()
	src := "package a\n" + strings.Repeat("\n", 10)
	for _, p := range []string{"a.go", "b.go", "a_test.go"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f := &fakeT{TB: t}
	if n := PackageTooLarge(f, dir, 21); n != 22 || f.errors != 1 {
		t.Errorf("%d lines, %d errors; want 22 (test files left out), 1", n, f.errors)
	}
	f = &fakeT{TB: t}
	if PackageTooLarge(f, dir, 22); f.errors != 0 {
		t.Errorf("at the bound: %d errors, want 0", f.errors)
	}
}
