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
