package gitsnap

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestChangedInAWorktreeAndTheUsersTree(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.go": "a\n", "b.go": "b\n", "sub/c.go": "c\n", ".gitignore": "*.log\n"})
	write(t, dir, "a.go", "a uncommitted\n") // the user's work, in the snapshot
	before := captureState(t, dir)
	wt, snap := taskWorktree(t, dir, "t_changed1")
	keep := filepath.Join(t.TempDir(), "index")

	got, err := Changed(t.Context(), wt, snap.Ref, keep)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Paths) != 0 {
		t.Errorf("a fresh worktree has changes: %q", got.Paths)
	}
	common := gitT(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if got.CommonDir != common {
		t.Errorf("common dir %q, want %q", got.CommonDir, common)
	}

	write(t, wt, "b.go", "b changed\n")
	write(t, wt, "new file.go", "new\n")
	write(t, wt, "x.log", "ignored\n")
	if err := os.Remove(filepath.Join(wt, "sub/c.go")); err != nil {
		t.Fatal(err)
	}
	gitT(t, wt, "add", "b.go")
	got, err = Changed(t.Context(), wt, snap.Ref, keep)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b.go", "new file.go", "sub/c.go"}; !slices.Equal(got.Paths, want) {
		t.Errorf("changed %q, want %q", got.Paths, want)
	}
	if got.CommonDir != common {
		t.Errorf("a worktree's common dir %q, want %q", got.CommonDir, common)
	}
	// Committed on the branch or not, a change is a change.
	gitT(t, wt, "commit", "-qm", "b")
	if again, err := Changed(t.Context(), wt, snap.Ref, keep); err != nil || !slices.Equal(again.Paths, got.Paths) {
		t.Errorf("after a commit: %v, %v", again, err)
	}
	// A temporary index sees the same.
	if tmp, err := Changed(t.Context(), wt, snap.Ref, ""); err != nil || !slices.Equal(tmp.Paths, got.Paths) {
		t.Errorf("on a temporary index: %+v, %v", tmp, err)
	}
	// A subdirectory sees its own files only.
	if sub, err := Changed(t.Context(), filepath.Join(wt, "sub"), snap.Ref, ""); err != nil || !slices.Equal(sub.Paths, []string{"sub/c.go"}) {
		t.Errorf("in sub: %+v, %v", sub, err)
	}
	sameUserState(t, before, captureState(t, dir))

	// A file changed back is no change.
	write(t, wt, "b.go", "b\n")
	if back, err := Changed(t.Context(), wt, snap.Ref, keep); err != nil || !slices.Equal(back.Paths, []string{"new file.go", "sub/c.go"}) {
		t.Errorf("after b.go went back: %+v, %v", back, err)
	}
	if _, err := Changed(t.Context(), wt, RefPrefix+"t_nosuch12", keep); err == nil {
		t.Error("a missing snapshot gave no error")
	}
}
