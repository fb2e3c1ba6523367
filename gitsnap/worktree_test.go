package gitsnap

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sameUserState checks what a task worktree must never touch: the user's
// index, HEAD, stash, files and branches (runner/ branches aside).
func sameUserState(t *testing.T, before, after repoState) {
	t.Helper()
	if before.Index != after.Index || before.HeadFile != after.HeadFile || before.Head != after.Head || before.Stash != after.Stash {
		t.Errorf("index, HEAD or stash changed:\n%+v\n%+v", before, after)
	}
	strip := func(refs string) string {
		var keep []string
		for _, l := range strings.Split(refs, "\n") {
			if !strings.HasPrefix(l, "refs/heads/"+BranchPrefix) {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if strip(before.Refs) != strip(after.Refs) {
		t.Errorf("refs changed:\n%s\n->\n%s", before.Refs, after.Refs)
	}
	if !reflect.DeepEqual(before.WorkFiles, after.WorkFiles) {
		t.Errorf("the user's files changed: %s", diffFiles(before.WorkFiles, after.WorkFiles))
	}
}

// taskWorktree snapshots dir as task id and makes its worktree.
func taskWorktree(t *testing.T, dir, id string) (wt string, snap *Snapshot) {
	t.Helper()
	snap, err := Take(t.Context(), dir, Options{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	wt = filepath.Join(t.TempDir(), id)
	if err := WorktreeAdd(t.Context(), dir, wt, BranchPrefix+id, snap.Commit); err != nil {
		t.Fatal(err)
	}
	return wt, snap
}

func TestWorktreeStartsFromWhatTheUserSees(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "one\n", ".gitignore": "*.log\n"})
	write(t, dir, "a.txt", "one\nuncommitted\n")
	write(t, dir, "new/u.txt", "untracked\n")
	write(t, dir, "debug.log", "ignored\n")
	gitT(t, dir, "stash", "list")
	before := captureState(t, dir)
	wt, _ := taskWorktree(t, dir, "t_wtfirst1")
	sameUserState(t, before, captureState(t, dir))
	for name, want := range map[string]string{"a.txt": "one\nuncommitted\n", "new/u.txt": "untracked\n"} {
		if b, err := os.ReadFile(filepath.Join(wt, name)); err != nil || string(b) != want {
			t.Errorf("%s in the worktree: %q, %v", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(wt, "debug.log")); !os.IsNotExist(err) {
		t.Errorf("an ignored file reached the worktree: %v", err)
	}
	if got := gitT(t, wt, "rev-parse", "--abbrev-ref", "HEAD"); got != "runner/t_wtfirst1" {
		t.Errorf("worktree branch %q", got)
	}
	// The same branch twice is refused.
	if err := WorktreeAdd(t.Context(), dir, wt+"2", "runner/t_wtfirst1", "HEAD"); !errors.Is(err, ErrExists) {
		t.Errorf("a second add of the branch: %v", err)
	}
	list, err := Worktrees(t.Context(), dir, BranchPrefix)
	if err != nil || len(list) != 1 || list[0].Branch != "runner/t_wtfirst1" {
		t.Fatalf("Worktrees = %+v, %v", list, err)
	}
	os.RemoveAll(wt) // deleted by hand
	if err := WorktreeRemove(t.Context(), dir, wt); err != nil {
		t.Fatal(err)
	}
	if list, _ := Worktrees(t.Context(), dir, BranchPrefix); len(list) != 0 {
		t.Fatalf("a worktree deleted by hand is still listed: %+v", list)
	}
}

func TestMergeConflictAndRebase(t *testing.T) {
	dir := newRepo(t, map[string]string{"f.txt": "a\nb\nc\n", "g.txt": "g\n"})
	// The user has uncommitted work of their own, not merged back.
	write(t, dir, "mine.txt", "the user's\n")
	wt1, s1 := taskWorktree(t, dir, "t_merge001")
	wt2, s2 := taskWorktree(t, dir, "t_merge002")
	write(t, wt1, "f.txt", "a\nFIRST\nc\n")
	gitT(t, wt1, "commit", "-q", "-am", "first")
	write(t, wt2, "f.txt", "a\nSECOND\nc\n")
	gitT(t, wt2, "commit", "-q", "-am", "second")
	if ok, _ := BranchMerged(t.Context(), dir, "runner/t_merge001", s1.Commit); ok {
		t.Fatal("an unmerged branch reads as merged")
	}

	res, err := Merge(t.Context(), dir, wt1, "runner/t_merge001", MergeOptions{Base: s1.Commit})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, dir, "show", "HEAD:f.txt"); got != "a\nFIRST\nc" || res.Into != "main" {
		t.Fatalf("after merge: f.txt %q, %+v", got, res)
	}
	if _, err := gitErr(dir, nil, "cat-file", "-e", "HEAD:mine.txt"); err == nil {
		t.Fatal("the user's uncommitted file was merged back as committed")
	}
	if ok, err := BranchMerged(t.Context(), dir, "runner/t_merge001", s1.Commit); !ok || err != nil {
		t.Fatalf("merged branch: %v %v", ok, err)
	}

	head := gitT(t, dir, "rev-parse", "HEAD")
	before := captureState(t, dir)
	_, err = Merge(t.Context(), dir, wt2, "runner/t_merge002", MergeOptions{Base: s2.Commit})
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Files) != 1 || ce.Files[0] != "f.txt" {
		t.Fatalf("second merge: %v", err)
	}
	if gitT(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("a conflicting merge moved the target")
	}
	sameUserState(t, before, captureState(t, dir))
	if st := gitT(t, wt2, "status", "--porcelain"); st != "" {
		t.Fatalf("the task's worktree is left mid-rebase: %q", st)
	}

	// Resolved by hand in the task's worktree, then merged with --rebase.
	if !strings.Contains(err.Error(), "git rebase --onto main") {
		t.Fatalf("the conflict does not say how to resolve: %v", err)
	}
	if _, err := gitErr(wt2, nil, "rebase", "--onto", "main", s2.Commit); err == nil {
		t.Fatal("the rebase by hand did not conflict")
	}
	write(t, wt2, "f.txt", "a\nFIRST\nSECOND\nc\n")
	gitT(t, wt2, "add", "f.txt")
	if _, err := gitErr(wt2, []string{"GIT_EDITOR=true"}, "rebase", "--continue"); err != nil {
		t.Fatal(err)
	}
	res, err = Merge(t.Context(), dir, wt2, "runner/t_merge002", MergeOptions{Base: s2.Commit, Rebase: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, dir, "show", "HEAD:f.txt"); got != "a\nFIRST\nSECOND\nc" || res.Mode != "rebase" {
		t.Fatalf("after the rebase merge: %q %+v", got, res)
	}
}

func TestMergeRefusesLocalChanges(t *testing.T) {
	dir := newRepo(t, map[string]string{"f.txt": "a\n", "g.txt": "g\n"})
	wt, s := taskWorktree(t, dir, "t_local001")
	write(t, wt, "f.txt", "agent\n")
	gitT(t, wt, "commit", "-q", "-am", "agent")
	write(t, dir, "f.txt", "the user's edit\n") // the same path, uncommitted
	write(t, dir, "g.txt", "elsewhere\n")       // another path: fine
	before := captureState(t, dir)
	_, err := Merge(t.Context(), dir, wt, "runner/t_local001", MergeOptions{Base: s.Commit, Squash: true})
	if !errors.Is(err, ErrLocalChanges) || !strings.Contains(err.Error(), "f.txt") {
		t.Fatalf("merge over local changes: %v", err)
	}
	sameUserState(t, before, captureState(t, dir))
	gitT(t, dir, "checkout", "f.txt")
	res, err := Merge(t.Context(), dir, wt, "runner/t_local001", MergeOptions{Base: s.Commit, Squash: true, Message: "squashed"})
	if err != nil || res.Mode != "squash" {
		t.Fatalf("squash: %+v %v", res, err)
	}
	if got := gitT(t, dir, "log", "-1", "--format=%s"); got != "squashed" {
		t.Fatalf("squash commit subject %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "g.txt")); string(b) != "elsewhere\n" {
		t.Fatalf("a local change elsewhere was lost: %q", b)
	}
}

// The repositories users have: a linked worktree of their own, a
// submodule, LFS pointer files, a sparse checkout. A task worktree is made
// from each, the user's state is untouched, and merging the agent's change
// back adds it and removes nothing.
func TestWorktreeKindsOfRepository(t *testing.T) {
	lfs := "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n"
	cases := map[string]func(t *testing.T) (dir string){
		"linked worktree": func(t *testing.T) string {
			dir := newRepo(t, map[string]string{"f.txt": "f\n"})
			linked := filepath.Join(t.TempDir(), "linked")
			gitT(t, dir, "worktree", "add", "-q", "-b", "feature", linked)
			write(t, linked, "wip.txt", "the user's work in progress\n")
			return linked
		},
		"submodule": func(t *testing.T) string {
			sub := newRepo(t, map[string]string{"lib.txt": "lib\n"})
			dir := newRepo(t, map[string]string{"f.txt": "f\n"})
			gitT(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "vendor/lib")
			gitT(t, dir, "commit", "-q", "-m", "submodule")
			return dir
		},
		"lfs pointers": func(t *testing.T) string {
			return newRepo(t, map[string]string{"f.txt": "f\n", ".gitattributes": "*.bin filter=lfs diff=lfs merge=lfs -text\n", "big.bin": lfs})
		},
		"sparse checkout": func(t *testing.T) string {
			dir := newRepo(t, map[string]string{"f.txt": "f\n", "a/x.txt": "x\n", "b/y.txt": "y\n"})
			gitT(t, dir, "sparse-checkout", "set", "a")
			return dir
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			dir := mk(t)
			linked := false
			if fi, err := os.Stat(filepath.Join(dir, ".git")); err == nil && !fi.IsDir() {
				linked = true // captureState reads a .git directory
			}
			var before repoState
			if !linked {
				before = captureState(t, dir)
			}
			status := gitT(t, dir, "status", "--porcelain", "--untracked-files=all")
			head := gitT(t, dir, "rev-parse", "HEAD")
			filesBefore := gitT(t, dir, "ls-tree", "-r", "--name-only", "HEAD")
			wt, s := taskWorktree(t, dir, "t_kinds001")
			if !linked {
				sameUserState(t, before, captureState(t, dir))
			}
			if gitT(t, dir, "status", "--porcelain", "--untracked-files=all") != status || gitT(t, dir, "rev-parse", "HEAD") != head {
				t.Fatal("the user's status or HEAD changed")
			}
			write(t, wt, "agent.txt", "the agent's\n")
			gitT(t, wt, "add", "agent.txt")
			gitT(t, wt, "commit", "-q", "-m", "agent")
			if _, err := Merge(t.Context(), dir, wt, "runner/t_kinds001", MergeOptions{Base: s.Commit, Squash: true, Message: "agent"}); err != nil {
				t.Fatalf("merge: %v", err)
			}
			after := gitT(t, dir, "ls-tree", "-r", "--name-only", "HEAD")
			for _, f := range strings.Fields(filesBefore) {
				if !strings.Contains("\n"+after+"\n", "\n"+f+"\n") {
					t.Errorf("the merge removed %s", f)
				}
			}
			if !strings.Contains(after, "agent.txt") {
				t.Errorf("the agent's file did not come back: %s", after)
			}
		})
	}
}

func TestMergeInto(t *testing.T) {
	dir := newRepo(t, map[string]string{"f.txt": "f\n"})
	gitT(t, dir, "branch", "release")
	wt, s := taskWorktree(t, dir, "t_into0001")
	write(t, wt, "g.txt", "agent\n")
	gitT(t, wt, "add", "g.txt")
	gitT(t, wt, "commit", "-q", "-m", "agent")
	before := captureState(t, dir)
	res, err := Merge(t.Context(), dir, wt, "runner/t_into0001", MergeOptions{Base: s.Commit, Into: "release"})
	if err != nil || res.Into != "release" {
		t.Fatalf("merge --into release: %+v %v", res, err)
	}
	if got := gitT(t, dir, "show", "release:g.txt"); got != "agent" {
		t.Fatalf("release has %q", got)
	}
	// main, checked out here, and the user's files did not move.
	after := captureState(t, dir)
	if before.Head != after.Head || !reflect.DeepEqual(before.WorkFiles, after.WorkFiles) {
		t.Fatal("merge --into moved the checked-out branch or the files")
	}
	if list, _ := Worktrees(t.Context(), dir, ""); len(list) != 2 { // the main one and the task's
		t.Fatalf("the temporary worktree is left: %+v", list)
	}
	if _, err := Merge(t.Context(), dir, wt, "runner/t_into0001", MergeOptions{Base: s.Commit, Into: "nope"}); !errors.Is(err, ErrNoBranch) {
		t.Fatalf("--into a missing branch: %v", err)
	}
}
