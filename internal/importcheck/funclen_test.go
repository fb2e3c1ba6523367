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
