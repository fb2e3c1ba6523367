package gitsnap

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOnlyGitsnapRunsGit keeps git invocations out of every other package's
// code (docs/architecture.md: gitsnap is the only code that runs git). Tests elsewhere
// may set up repositories with git.
func TestOnlyGitsnapRunsGit(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skip("module root not found")
	}
	runsGit := regexp.MustCompile(`exec\.Command(Context)?\([^)]*"git"`)
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == filepath.Join(root, "gitsnap") || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if runsGit.Match(b) {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s runs git; only package gitsnap may", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
