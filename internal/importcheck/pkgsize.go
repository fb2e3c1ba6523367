package importcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PackageTooLarge fails t when the package in dir (its non-test Go files,
// not its sub-packages) has more than max lines, and returns how many it
// has: what grows past the bound belongs in a package of its own.
func PackageTooLarge(t testing.TB, dir string, max int) (lines int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines > max {
		t.Errorf("package %s has %d lines of code (its non-test files), over the bound of %d: move what grew into a package below it (docs/architecture.md)", dir, lines, max)
	}
	return lines
}
