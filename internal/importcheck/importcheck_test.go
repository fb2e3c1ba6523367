package importcheck

import (
	"path/filepath"
	"testing"
)

// TestOnlyAndNone: each import out of the rules is one error; test files
// are not read.
func TestOnlyAndNone(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.go"), "package a\n\nimport (\n\t\"os\"\n\t\""+Module+"state\"\n\t\""+Module+"internal/clock\"\n)\n")
	writeFile(t, filepath.Join(dir, "a_test.go"), "package a\n\nimport (\n\t\"os/exec\"\n\t\""+Module+"tmuxctl\"\n)\n")
	for _, c := range []struct {
		name  string
		check func(testing.TB)
		want  int
	}{
		{"Only: state allowed", func(tb testing.TB) { Only(tb, dir, "state") }, 0},
		{"Only: state not allowed", func(tb testing.TB) { Only(tb, dir) }, 1},
		{"None: os", func(tb testing.TB) { None(tb, dir, "os", "os/exec") }, 1},
		{"None: nothing banned imported", func(tb testing.TB) { None(tb, dir, "net", "syscall") }, 0},
	} {
		f := &fakeT{TB: t}
		c.check(f)
		if f.errors != c.want {
			t.Errorf("%s: %d errors, want %d", c.name, f.errors, c.want)
		}
	}
}

// TestNoInitWork holds the module's package-level variables to values
// that cost nothing at start: no regexp compiled before main (issue 51).
func TestNoInitWork(t *testing.T) {
	if n := InitWork(t, "../..", "regexp.MustCompile", "regexp.Compile", "template.Must"); n < 100 {
		t.Fatalf("only %d files checked: not the module's root?", n)
	}
}

func TestInitWorkCatches(t *testing.T) {
	dir := t.TempDir()
	src := "package a\n\nimport \"regexp\"\n\nvar (\n\tbad = regexp.MustCompile(`x`)\n\tlazy = func() *regexp.Regexp { return regexp.MustCompile(`y`) }\n)\n"
	writeFile(t, filepath.Join(dir, "a.go"), src)
	writeFile(t, filepath.Join(dir, "a_test.go"), src)
	f := &fakeT{TB: t}
	InitWork(f, dir, "regexp.MustCompile")
	if f.errors != 1 {
		t.Errorf("%d errors, want 1 (bad, in a.go only)", f.errors)
	}
}
