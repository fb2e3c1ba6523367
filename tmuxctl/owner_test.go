package tmuxctl

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOnlyTmuxctlRunsTmux keeps tmux invocations out of every other package's
// code (DESIGN.md: tmuxctl is the only code that runs tmux). Tests elsewhere
// may use tmux directly only where they say why.
func TestOnlyTmuxctlRunsTmux(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skip("module root not found")
	}
	runsTmux := regexp.MustCompile(`exec\.Command(Context)?\([^)]*"tmux"`)
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == filepath.Join(root, "tmuxctl") || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
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
		if runsTmux.Match(b) {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s runs git; only package tmuxctl may", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
