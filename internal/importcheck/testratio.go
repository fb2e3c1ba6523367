package importcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLines counts the lines of the package in dir, not its
// sub-packages: code in its non-test Go files, tests in its _test.go
// files (as wc -l counts them).
func TestLines(t testing.TB, dir string) (code, tests int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(b), "\n")
		if strings.HasSuffix(f, "_test.go") {
			tests += n
		} else {
			code += n
		}
	}
	return code, tests
}

// TooFewTests fails t when the package in dir has fewer than min lines
// of tests per line of code (TestLines), and returns its ratio: a
// package above the core is tested through fakes of the small
// interfaces it declares, not only end to end (issue 55 §2). A folder
// without code fails too (a package moved away: take it off the list).
func TooFewTests(t testing.TB, dir string, min float64) (ratio float64) {
	t.Helper()
	code, tests := TestLines(t, dir)
	if code == 0 {
		t.Errorf("%s: no Go code there (moved or renamed? update the list)", dir)
		return 0
	}
	ratio = float64(tests) / float64(code)
	if ratio < min {
		t.Errorf("package %s has %d lines of tests for %d lines of code (%.2f per line), under %.2f: test what you added through fakes of the interfaces the package declares (internal/importcheck: TestLines counts them)",
			dir, tests, code, ratio, min)
	}
	return ratio
}
