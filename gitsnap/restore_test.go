package gitsnap

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// propertyPaths are the names random operations use: nested, spaced,
// unicode, and pairs where one name is the other's directory ("p", "p/q").
var propertyPaths = []string{"a", "b.txt", "c d", "e/f", "e/g/h", "p", "p/q", "p/r/s", "ün/ï.txt", "x\ny", "link"}

// randomOps applies n random edits, creations, deletions, renames, mode
// changes and symlinks to the work tree; with stage, some are staged too.
func randomOps(t *testing.T, rng *rand.Rand, dir string, n int, stage bool) {
	t.Helper()
	pick := func() string { return propertyPaths[rng.IntN(len(propertyPaths))] }
	for range n {
		p := pick()
		full := filepath.Join(dir, filepath.FromSlash(p))
		switch rng.IntN(7) {
		case 0, 1: // edit or create
			makeRoom(t, dir, p)
			if err := os.WriteFile(full, []byte(fmt.Sprintf("content %d\n", rng.IntN(1000))), 0o644); err != nil {
				t.Fatal(err)
			}
		case 2: // delete
			os.RemoveAll(full)
		case 3: // rename
			q := pick()
			if q == p || strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
				continue
			}
			if fi, err := os.Lstat(full); err != nil || fi.IsDir() {
				continue
			}
			makeRoom(t, dir, q)
			if err := os.Rename(full, filepath.Join(dir, filepath.FromSlash(q))); err != nil {
				t.Fatal(err)
			}
		case 4: // toggle the exec bit
			if fi, err := os.Lstat(full); err == nil && fi.Mode().IsRegular() {
				os.Chmod(full, fi.Mode().Perm()^0o111)
			}
		case 5: // symlink
			makeRoom(t, dir, p)
			if err := os.Symlink(pick(), full); err != nil {
				t.Fatal(err)
			}
		case 6:
			if stage {
				gitErr(dir, nil, "add", "-A", "--", p) // may match nothing
			}
		}
	}
}

// makeRoom clears whatever blocks creating a file at p: the path itself and
// any parent that is not a directory.
func makeRoom(t *testing.T, dir, p string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	os.RemoveAll(full)
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		parent := filepath.Join(dir, filepath.FromSlash(strings.Join(parts[:i], "/")))
		if fi, err := os.Lstat(parent); err == nil && !fi.IsDir() {
			os.Remove(parent)
		}
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreProperty: random changes → snapshot → more random changes →
// restore → the work tree equals the snapshot's tree; restoring the undo
// snapshot brings back the state before the restore. Index, HEAD and refs
// never move.
func TestRestoreProperty(t *testing.T) {
	const iterations = 24
	for seed := range uint64(iterations) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			files := map[string]string{}
			if seed%5 != 0 { // every fifth repo is unborn
				files = map[string]string{"a": "a\n", "e/f": "f\n", "p/q": "q\n", "c d": "cd\n"}
			}
			dir := newRepo(t, files)
			randomOps(t, rng, dir, 8, true)
			snap, err := Take(t.Context(), dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			snapFiles := treeFiles(t, dir, snap.Tree)
			if d := diffFiles(workFiles(t, dir, nil), snapFiles); d != "" {
				t.Fatalf("snapshot is not the work tree:\n%s", d)
			}
			randomOps(t, rng, dir, 8, false)
			before := captureState(t, dir)
			res, err := Restore(t.Context(), dir, snap.ID)
			if err != nil {
				t.Fatal(err)
			}
			after := captureState(t, dir)
			if d := diffFiles(snapFiles, after.WorkFiles); d != "" {
				t.Fatalf("after restore the work tree is not the snapshot:\n%s", d)
			}
			after.WorkFiles = before.WorkFiles
			assertSameState(t, before, after)
			if d := diffFiles(before.WorkFiles, treeFiles(t, dir, res.Undo.Tree)); d != "" {
				t.Fatalf("undo snapshot is not the state before restore:\n%s", d)
			}
			if _, err := Restore(t.Context(), dir, res.Undo.ID); err != nil {
				t.Fatal(err)
			}
			if d := diffFiles(before.WorkFiles, workFiles(t, dir, nil)); d != "" {
				t.Fatalf("restoring the undo snapshot did not undo:\n%s", d)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, baseFiles)
	s1, err := Take(t.Context(), dir, Options{ID: "s_one"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "README.md", "hello\nworld\n")
	write(t, dir, "brand new.txt", "new\n")
	os.Remove(filepath.Join(dir, "src/main.go"))
	before := captureState(t, dir)
	d, err := Diff(t.Context(), dir, "s_o", DiffOptions{Patch: true})
	if err != nil {
		t.Fatal(err)
	}
	assertSameState(t, before, captureState(t, dir))
	if d.From != "s_one" || d.To != WorkTree {
		t.Errorf("from %s to %s", d.From, d.To)
	}
	got := map[string]string{}
	for _, f := range d.Files {
		got[f.Path] = f.Status
	}
	want := map[string]string{"README.md": "M", "brand new.txt": "A", "src/main.go": "D"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files %v, want %v", got, want)
	}
	for _, s := range []string{"README.md", "brand new.txt", "src/main.go", "3 files changed"} {
		if !strings.Contains(d.Stat, s) {
			t.Errorf("stat lacks %q:\n%s", s, d.Stat)
		}
	}
	for _, s := range []string{"+world", "--- a/src/main.go", "+++ b/brand new.txt", "-package main"} {
		if !strings.Contains(d.Patch, s) {
			t.Errorf("patch lacks %q:\n%s", s, d.Patch)
		}
	}
	s2, err := Take(t.Context(), dir, Options{ID: "s_two"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "README.md", "changed after s_two\n")
	between, err := Diff(t.Context(), dir, s1.ID, DiffOptions{Against: s2.ID})
	if err != nil {
		t.Fatal(err)
	}
	if between.To != "s_two" || len(between.Files) != 3 || between.Patch != "" {
		t.Errorf("snapshot to snapshot: %+v", between)
	}
	same, err := Diff(t.Context(), dir, "s_two", DiffOptions{Against: "s_two", Patch: true})
	if err != nil || len(same.Files) != 0 || same.Stat != "" || same.Patch != "" {
		t.Errorf("a snapshot against itself: %+v %v", same, err)
	}
}

func TestRestoreSkipsSubmodules(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"top.txt": "top\n"})
	snap, err := Take(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb := filepath.Join(dir, "emb")
	os.Mkdir(emb, 0o755)
	gitT(t, emb, "init", "-q")
	write(t, emb, "e.txt", "e\n")
	gitT(t, emb, "add", "-A")
	gitT(t, emb, "commit", "-q", "-m", "emb")
	write(t, dir, "top.txt", "changed\n")
	res, err := Restore(t.Context(), dir, snap.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Path != "emb" {
		t.Errorf("skipped %+v, want the embedded repo", res.Skipped)
	}
	if b, err := os.ReadFile(filepath.Join(emb, "e.txt")); err != nil || string(b) != "e\n" {
		t.Error("restore touched the inside of a submodule")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "top.txt")); string(b) != "top\n" {
		t.Errorf("top.txt = %q after restore", b)
	}
}

func TestSafePath(t *testing.T) {
	for p, want := range map[string]bool{
		"a": true, "a/b c": true, "ü/x": true, "..a": true,
		"": false, "/etc/passwd": false, "../x": false, "a/../b": false, ".git/config": false, "a/.GIT/x": false, "a//b": false,
	} {
		if got := safePath(p); got != want {
			t.Errorf("safePath(%q) = %v, want %v", p, got, want)
		}
	}
}
