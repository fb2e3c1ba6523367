package importcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// minTestRatio is the lines of tests per line of code every package
// under runner/ keeps (issue 55 §2 and §7); the root package, runner/,
// is held apart (TestRootPackageSize). gc, hosts, tasks, watch and
// worktree, then changes, fault, notice, placement, reconcile, remote,
// taskbook and worktree/setup were brought to it through fakes of the
// small interfaces they declare.
const minTestRatio = 0.4

// runnerPackages are the folders under runner/ that hold Go code, as
// paths below it.
func runnerPackages(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.IsDir() || p == root {
			return err
		}
		if e.Name() == "testdata" {
			return filepath.SkipDir
		}
		if code, _ := TestLines(t, p); code > 0 {
			rel, _ := filepath.Rel(root, p)
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 20 {
		t.Fatalf("only %d packages found under %s: not the repository's runner/?", len(found), root)
	}
	return found
}

// TestTestRatio holds each package under runner/, a new one too, to
// minTestRatio.
func TestTestRatio(t *testing.T) {
	root := "../../runner"
	found := runnerPackages(t, root)
	for _, p := range found {
		TooFewTests(t, filepath.Join(root, p), minTestRatio)
	}
	for _, p := range []string{"gc", "hosts", "tasks", "watch", "worktree", "changes", "placement", "remote", "worktree/setup"} {
		if !slices.Contains(found, p) {
			t.Errorf("runner/%s is gone: the guard no longer holds it", p)
		}
	}
}

func TestTooFewTestsCatches(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.go"), "package a\n"+strings.Repeat("\n", 9))      // 10 lines
	writeFile(t, filepath.Join(dir, "a_test.go"), "package a\n"+strings.Repeat("\n", 2)) // 3 lines
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub", "b_test.go"), "package b\n"+strings.Repeat("\n", 99)) // not counted
	f := &fakeT{TB: t}
	if r := TooFewTests(f, dir, 0.4); f.errors != 1 || r != 0.3 {
		t.Errorf("3 test lines for 10: ratio %v, %d errors; want 0.3 and one error", r, f.errors)
	}
	writeFile(t, filepath.Join(dir, "b_test.go"), "package a\n")
	f = &fakeT{TB: t}
	if r := TooFewTests(f, dir, 0.4); f.errors != 0 || r != 0.4 {
		t.Errorf("4 test lines for 10: ratio %v, %d errors; want 0.4 and none", r, f.errors)
	}
	f = &fakeT{TB: t}
	TooFewTests(f, filepath.Join(dir, "sub"), 0.4)
	if f.errors != 1 {
		t.Errorf("a folder without code: %d errors, want 1", f.errors)
	}
}
