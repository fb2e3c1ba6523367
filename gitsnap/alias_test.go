package gitsnap

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestAliasAndBetween: a group's snapshot aliased for two candidates, each
// a worktree from it; the two trees compared with Between; lines counted
// by Diff.
func TestAliasAndBetween(t *testing.T) {
	dir := newRepo(t, baseFiles)
	write(t, dir, "wip.txt", "the user's own work\n")
	g, err := Take(t.Context(), dir, Options{ID: "g_group001"})
	if err != nil {
		t.Fatal(err)
	}
	var trees []string
	for _, id := range []string{"t_cand0001", "t_cand0002"} {
		s, err := Alias(t.Context(), dir, g.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if s.ID != id || s.Tree != g.Tree || s.Base != g.Base || s.Commit == g.Commit || !s.Dirty {
			t.Fatalf("alias %+v of %+v", s, g)
		}
		back, err := Get(t.Context(), dir, id)
		if err != nil || back.ID != id || back.Tree != g.Tree {
			t.Fatalf("Get(%s) = %+v, %v", id, back, err)
		}
		wt := filepath.Join(t.TempDir(), id)
		if err := WorktreeAdd(t.Context(), dir, wt, BranchPrefix+id, s.Commit); err != nil {
			t.Fatal(err)
		}
		trees = append(trees, wt)
	}
	if _, err := Alias(t.Context(), dir, g.ID, "t_cand0001"); !errors.Is(err, ErrExists) {
		t.Errorf("alias over an existing snapshot: %v", err)
	}
	if _, err := Alias(t.Context(), dir, "g_nosuch00", "t_cand0003"); !errors.Is(err, ErrNotFound) {
		t.Errorf("alias of a missing snapshot: %v", err)
	}
	write(t, trees[0], "wip.txt", "one\ntwo\nthree\n")
	write(t, trees[1], "new.txt", "a\n")
	d, err := Diff(t.Context(), trees[0], "t_cand0001", DiffOptions{Lines: true})
	if err != nil || d.Insertions != 3 || d.Deletions != 1 || len(d.Files) != 1 {
		t.Fatalf("Diff with lines = %+v, %v", d, err)
	}
	b, err := Between(t.Context(), trees[0], trees[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Files) != 2 || !strings.Contains(b.Patch, "+a") || !strings.Contains(b.Patch, "-three") || b.Insertions != 2 || b.Deletions != 3 {
		t.Errorf("Between = %+v", b)
	}
	if same, err := Between(t.Context(), trees[1], trees[1]); err != nil || len(same.Files) != 0 || same.Patch != "" {
		t.Errorf("Between a tree and itself = %+v, %v", same, err)
	}
}
