package gitsnap

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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

// gitCalls makes every git call of this package go through a script that
// logs it, for the rest of the test; calls returns the calls logged since
// the last time (each its git command and arguments, without the -c
// options every call has).
func gitCalls(t *testing.T) (calls func() []string) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log, script := filepath.Join(dir, "log"), filepath.Join(dir, "git")
	body := "#!/bin/sh\nlog='" + log + "'\nskip=\nfor a in \"$@\"; do\n" +
		"  if [ -n \"$skip\" ]; then skip=; continue; fi\n" +
		"  if [ \"$a\" = -c ]; then skip=1; continue; fi\n" +
		"  printf '%s ' \"$a\" >>\"$log\"\ndone\necho >>\"$log\"\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	old := gitProgram
	gitProgram = script
	t.Cleanup(func() { gitProgram = old })
	return func() []string {
		b, _ := os.ReadFile(log)
		os.Remove(log)
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
}

// TestChangedAfterTakeAsksLess: a look at the files changed, in the
// process that took the snapshot, runs no rev-parse (what it would find is
// known), and finds what a fresh process finds; one that needs HEAD (no
// index to start from) asks for it.
func TestChangedAfterTakeAsksLess(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.go": "a\n", "b.go": "b\n", ".gitignore": "*.log\n"})
	snap, err := Take(t.Context(), dir, Options{ID: "t_known1"})
	if err != nil {
		t.Fatal(err)
	}
	calls := gitCalls(t)
	keep := filepath.Join(t.TempDir(), "index")
	write(t, dir, "b.go", "b changed\n")
	write(t, dir, "c.go", "new\n")
	got, err := Changed(t.Context(), dir, snap.Ref, keep)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b.go", "c.go"}; !slices.Equal(got.Paths, want) {
		t.Errorf("changed %q, want %q", got.Paths, want)
	}
	if c := calls(); len(c) != 3 || slices.ContainsFunc(c, func(s string) bool { return strings.HasPrefix(s, "rev-parse") }) {
		t.Errorf("git calls %q, want add, write-tree and diff-tree", c)
	}
	// What a process that knows nothing finds.
	knownRepos.forget(dir)
	fresh, err := Changed(t.Context(), dir, snap.Ref, "")
	if err != nil || !slices.Equal(fresh.Paths, got.Paths) || fresh.CommonDir != got.CommonDir || fresh.Top != got.Top {
		t.Errorf("a fresh look: %+v, %v; the known one %+v", fresh, err, got)
	}
	if c := calls(); len(c) != 4 || !strings.HasPrefix(c[0], "rev-parse") {
		t.Errorf("git calls of a fresh look %q, want rev-parse, add, write-tree, diff-tree", c)
	}
	// No index to start from: HEAD's tree is read into a new one, so
	// HEAD is asked for.
	if err := os.Remove(filepath.Join(dir, ".git", "index")); err != nil {
		t.Fatal(err)
	}
	again, err := Changed(t.Context(), dir, snap.Ref, "")
	if err != nil || !slices.Equal(again.Paths, got.Paths) {
		t.Errorf("without the user's index: %+v, %v", again, err)
	}
	if c := calls(); len(c) == 0 || !slices.ContainsFunc(c, func(s string) bool { return strings.HasPrefix(s, "rev-parse") }) || !slices.ContainsFunc(c, func(s string) bool { return strings.HasPrefix(s, "read-tree") }) {
		t.Errorf("git calls without the user's index %q, want a rev-parse and a read-tree", c)
	}
}

// TestChangedFromTheSnapshotsIndex: a snapshot taken with a Keep leaves its
// index there; a look on it while nothing changed runs git's add only (no
// tree written), and a look after a change finds it, as a fresh process
// does.
func TestChangedFromTheSnapshotsIndex(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.go": "a\n", "b.go": "b\n"})
	// Files older than the index (git looks again at a file written in
	// the second its index was, and writes the index then).
	old := func(names ...string) {
		for _, n := range names {
			if err := os.Chtimes(filepath.Join(dir, n), time.Unix(1e9, 0), time.Unix(1e9, 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	old("a.go", "b.go")
	keep := filepath.Join(t.TempDir(), "tasks", "t_kept1.index")
	snap, err := Take(t.Context(), dir, Options{ID: "t_kept1", Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	calls := gitCalls(t)
	look := func(want ...string) []string {
		t.Helper()
		got, err := Changed(t.Context(), dir, snap.Ref, keep)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Paths, append([]string{}, want...)) {
			t.Errorf("changed %q, want %q", got.Paths, want)
		}
		return calls()
	}
	if c := look(); !slices.Equal(c, []string{"add -A"}) {
		t.Errorf("git calls with nothing changed %q, want add only", c)
	}
	write(t, dir, "b.go", "b changed\n")
	old("b.go")
	if c := look("b.go"); len(c) != 3 {
		t.Errorf("git calls after a change %q, want add, write-tree and diff-tree", c)
	}
	if c := look("b.go"); len(c) != 2 || c[0] != "add -A" {
		t.Errorf("git calls with nothing changed since the last look %q, want add and diff-tree", c)
	}
	write(t, dir, "c.go", "new\n")
	look("b.go", "c.go")
	// A process that knows nothing of the kept index: git writes its tree.
	knownRepos.forget(dir)
	knownRepos.mu.Lock()
	knownRepos.kept = nil
	knownRepos.mu.Unlock()
	if c := look("b.go", "c.go"); len(c) != 4 || !slices.Contains(c, "write-tree") {
		t.Errorf("git calls of a fresh look %q, want rev-parse, add, write-tree and diff-tree", c)
	}
}
