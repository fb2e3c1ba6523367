package gitsnap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var baseFiles = map[string]string{
	"README.md":       "hello\n",
	"src/main.go":     "package main\n",
	"src/lib/util.go": "package lib\n",
	"docs/a b.txt":    "spaced\n",
}

func TestTakeLeavesRepoUntouched(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string // committed; nil means unborn
		setup  func(t *testing.T, dir string)
		dirty  bool
		counts Counts
	}{
		{name: "clean", files: baseFiles},
		{name: "dirty", files: baseFiles, dirty: true, counts: Counts{Added: 2, Modified: 1, Deleted: 1},
			setup: func(t *testing.T, dir string) {
				write(t, dir, "README.md", "changed\n")
				write(t, dir, "new.txt", "new\n")
				write(t, dir, "src/new/deep.go", "package new\n")
				os.Remove(filepath.Join(dir, "src/main.go"))
			}},
		{name: "staged-only", files: baseFiles, dirty: true, counts: Counts{Added: 1, Modified: 1},
			setup: func(t *testing.T, dir string) {
				write(t, dir, "README.md", "staged\n")
				write(t, dir, "added.txt", "added\n")
				gitT(t, dir, "add", "README.md", "added.txt")
			}},
		{name: "staged-then-changed", files: baseFiles, dirty: true, counts: Counts{Modified: 1, Deleted: 1},
			setup: func(t *testing.T, dir string) {
				write(t, dir, "README.md", "staged\n")
				write(t, dir, "gone.txt", "gone\n")
				gitT(t, dir, "add", "README.md", "gone.txt")
				write(t, dir, "README.md", "then changed\n")
				os.Remove(filepath.Join(dir, "gone.txt"))
				gitT(t, dir, "rm", "-q", "--cached", "docs/a b.txt")
				os.Remove(filepath.Join(dir, "docs/a b.txt"))
			}},
		{name: "unborn-empty"},
		{name: "unborn-with-files", dirty: true, counts: Counts{Added: 2},
			setup: func(t *testing.T, dir string) {
				write(t, dir, "a.txt", "a\n")
				write(t, dir, "b/c.txt", "c\n")
				gitT(t, dir, "add", "a.txt")
			}},
		{name: "detached", files: baseFiles, dirty: true, counts: Counts{Added: 1},
			setup: func(t *testing.T, dir string) {
				gitT(t, dir, "checkout", "-q", "--detach")
				write(t, dir, "x.txt", "x\n")
			}},
		{name: "with-stash", files: baseFiles, dirty: true, counts: Counts{Modified: 1},
			setup: func(t *testing.T, dir string) {
				write(t, dir, "README.md", "stashed\n")
				gitT(t, dir, "stash", "-q")
				write(t, dir, "src/main.go", "package main // dirty\n")
			}},
		{name: "split-index-and-untracked-cache", files: baseFiles, dirty: true, counts: Counts{Added: 1, Modified: 1},
			setup: func(t *testing.T, dir string) {
				gitT(t, dir, "config", "core.splitIndex", "true")
				gitT(t, dir, "config", "core.untrackedCache", "true")
				gitT(t, dir, "update-index", "--split-index", "--untracked-cache")
				write(t, dir, "README.md", "split\n")
				write(t, dir, "new.txt", "new\n")
				gitT(t, dir, "add", "README.md")
				gitT(t, dir, "status", "--porcelain") // fills the untracked cache
			}},
		{name: "sha256", dirty: true, counts: Counts{Added: 1, Modified: 1},
			setup: func(t *testing.T, dir string) {
				os.RemoveAll(filepath.Join(dir, ".git"))
				gitT(t, dir, "init", "-q", "--object-format=sha256")
				write(t, dir, "a.txt", "a\n")
				gitT(t, dir, "add", "-A")
				gitT(t, dir, "commit", "-q", "-m", "sha256")
				write(t, dir, "a.txt", "changed\n")
				write(t, dir, "b.txt", "b\n")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := newRepo(t, tt.files)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			before := captureState(t, dir)
			s, err := Take(t.Context(), dir, Options{Label: "before " + tt.name})
			if err != nil {
				t.Fatal(err)
			}
			assertSameState(t, before, captureState(t, dir))
			if d := diffFiles(before.WorkFiles, treeFiles(t, dir, s.Tree)); d != "" {
				t.Errorf("snapshot tree is not the work tree:\n%s", d)
			}
			if s.Dirty != tt.dirty || s.Counts != tt.counts {
				t.Errorf("dirty=%v counts=%+v, want %v %+v", s.Dirty, s.Counts, tt.dirty, tt.counts)
			}
			if want := strings.TrimSpace(before.Head); s.Base != want {
				t.Errorf("base %q, want %q", s.Base, want)
			}
			parent, _ := gitErr(dir, nil, "rev-parse", "-q", "--verify", s.Commit+"^")
			if strings.TrimSpace(parent) != s.Base {
				t.Errorf("snapshot parent %q, want base %q", parent, s.Base)
			}
			if got := gitT(t, dir, "rev-parse", s.Ref); got != s.Commit {
				t.Errorf("ref %s is %s, want %s", s.Ref, got, s.Commit)
			}
			wantBranch := "main"
			if tt.name == "detached" {
				wantBranch = ""
			}
			if s.Branch != wantBranch {
				t.Errorf("branch %q, want %q", s.Branch, wantBranch)
			}
			// What List reads back from the commit is what Take returned.
			got, err := Get(t.Context(), dir, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := *s
			want.Duration = 0
			if !got.Time.Equal(want.Time) {
				t.Errorf("time read back %v, want %v", got.Time, want.Time)
			}
			got.Time = want.Time
			if *got != want {
				t.Errorf("read back\n%+v\nwant\n%+v", *got, want)
			}
		})
	}
}

func TestTakeEdgeCases(t *testing.T) {
	t.Run("odd paths", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, map[string]string{"plain": "p\n"})
		names := []string{"with space.txt", "new\nline.txt", "tab\there", "ünïcödé/文件.txt", "-leading-dash", "quote\"d'", "back\\slash", "star*?[x]"}
		for _, n := range names {
			write(t, dir, n, n+"\n")
		}
		s, err := Take(t.Context(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := diffFiles(workFiles(t, dir, nil), treeFiles(t, dir, s.Tree)); d != "" {
			t.Fatalf("snapshot differs:\n%s", d)
		}
		if s.Counts.Added != len(names) {
			t.Errorf("added %d, want %d", s.Counts.Added, len(names))
		}
		d, err := Diff(t.Context(), dir, s.ID, DiffOptions{})
		if err != nil || len(d.Files) != 0 {
			t.Fatalf("diff right after snapshot: %+v %v", d, err)
		}
		for _, n := range names {
			os.Remove(filepath.Join(dir, n))
		}
		d, err = Diff(t.Context(), dir, s.ID, DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, f := range d.Files {
			paths = append(paths, f.Path)
		}
		if len(paths) != len(names) {
			t.Errorf("diff lists %q, want %q", paths, names)
		}
		if _, err := Restore(t.Context(), dir, s.ID); err != nil {
			t.Fatal(err)
		}
		if d := diffFiles(treeFiles(t, dir, s.Tree), workFiles(t, dir, nil)); d != "" {
			t.Fatalf("restore differs:\n%s", d)
		}
	})

	t.Run("symlinks and exec bit", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, map[string]string{"script.sh": "#!/bin/sh\n", "target.txt": "t\n"})
		if err := os.Chmod(filepath.Join(dir, "script.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("target.txt", filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../nowhere", filepath.Join(dir, "dangling")); err != nil {
			t.Fatal(err)
		}
		s, err := Take(t.Context(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		files := treeFiles(t, dir, s.Tree)
		if files["script.sh"].Mode != "100755" || files["link"] != (entry{"120000", "target.txt"}) || files["dangling"] != (entry{"120000", "../nowhere"}) {
			t.Fatalf("modes not recorded: %+v", files)
		}
		os.Chmod(filepath.Join(dir, "script.sh"), 0o644)
		os.Remove(filepath.Join(dir, "link"))
		write(t, dir, "link", "now a file\n")
		os.Remove(filepath.Join(dir, "dangling"))
		if _, err := Restore(t.Context(), dir, s.ID); err != nil {
			t.Fatal(err)
		}
		if d := diffFiles(files, workFiles(t, dir, nil)); d != "" {
			t.Fatalf("restore differs:\n%s", d)
		}
	})

	t.Run("ignored files", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, map[string]string{".gitignore": "*.log\nbuild/\n", "a.txt": "a\n"})
		write(t, dir, "debug.log", "noise\n")
		write(t, dir, "build/out.bin", "bin\n")
		write(t, dir, "kept.txt", "kept\n")
		s, err := Take(t.Context(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		files := treeFiles(t, dir, s.Tree)
		if _, ok := files["debug.log"]; ok {
			t.Error("ignored debug.log is in the snapshot")
		}
		if _, ok := files["build/out.bin"]; ok {
			t.Error("ignored build/out.bin is in the snapshot")
		}
		if _, ok := files["kept.txt"]; !ok {
			t.Error("untracked kept.txt is not in the snapshot")
		}
		os.Remove(filepath.Join(dir, "kept.txt"))
		write(t, dir, "later.txt", "later\n")
		if _, err := Restore(t.Context(), dir, s.ID); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]bool{"debug.log": true, "build/out.bin": true, "kept.txt": true, "later.txt": false} {
			if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
				t.Errorf("after restore %s exists=%v, want %v", name, err == nil, want)
			}
		}
	})

	t.Run("submodule recorded as gitlink", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, map[string]string{"top.txt": "top\n"})
		sub := filepath.Join(dir, "sub")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		gitT(t, sub, "init", "-q")
		write(t, sub, "inner.txt", "inner\n")
		gitT(t, sub, "add", "-A")
		gitT(t, sub, "commit", "-q", "-m", "sub")
		subHead := gitT(t, sub, "rev-parse", "HEAD")
		gitT(t, dir, "add", "sub")
		gitT(t, dir, "commit", "-q", "-m", "add sub")
		// An uncommitted change inside the submodule and an embedded repo
		// that was never added.
		write(t, sub, "inner.txt", "changed inside\n")
		emb := filepath.Join(dir, "embedded")
		os.Mkdir(emb, 0o755)
		gitT(t, emb, "init", "-q")
		write(t, emb, "e.txt", "e\n")
		gitT(t, emb, "add", "-A")
		gitT(t, emb, "commit", "-q", "-m", "emb")
		before := captureState(t, dir)
		subIndex, _ := os.ReadFile(filepath.Join(sub, ".git", "index"))
		s, err := Take(t.Context(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		assertSameState(t, before, captureState(t, dir))
		if after, _ := os.ReadFile(filepath.Join(sub, ".git", "index")); string(after) != string(subIndex) {
			t.Error("the submodule's index changed")
		}
		files := treeFiles(t, dir, s.Tree)
		if files["sub"] != (entry{"160000", subHead}) {
			t.Errorf("sub recorded as %+v, want gitlink %s", files["sub"], subHead)
		}
		if e := files["embedded"]; e.Mode != "160000" {
			t.Errorf("embedded repo recorded as %+v, want a gitlink", e)
		}
		for p := range files {
			if strings.HasPrefix(p, "sub/") || strings.HasPrefix(p, "embedded/") {
				t.Errorf("snapshot recursed into a submodule: %s", p)
			}
		}
	})

	t.Run("large file", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, map[string]string{"a": "a\n"})
		big := strings.Repeat("0123456789abcdef", 1<<18) // 4 MiB
		write(t, dir, "big.bin", big)
		s, err := Take(t.Context(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := gitRaw(t, dir, "cat-file", "-s", s.Tree+":big.bin"); strings.TrimSpace(got) != "4194304" {
			t.Errorf("big.bin recorded with size %s", got)
		}
	})

	t.Run("hooks and signing configured", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, map[string]string{"a": "a\n"})
		hooks := filepath.Join(dir, ".git", "hooks")
		for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "reference-transaction"} {
			if err := os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\necho hook ran >&2\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		gitT(t, dir, "config", "commit.gpgSign", "true")
		gitT(t, dir, "config", "gpg.program", "/bin/false")
		gitT(t, dir, "config", "core.hooksPath", hooks)
		write(t, dir, "a", "changed\n")
		s, err := Take(t.Context(), dir, Options{ID: "t_hooks001"})
		if err != nil {
			t.Fatalf("a failing reference-transaction hook broke the snapshot: %v", err)
		}
		if sig := gitT(t, dir, "cat-file", "commit", s.Commit); strings.Contains(sig, "gpgsig") {
			t.Error("snapshot commit is signed")
		}
		res, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_hooks001", Task: "edit a", All: true})
		if err != nil || res.Outcome != Committed {
			t.Fatalf("commit with hooks and signing configured: %+v %v", res, err)
		}
	})

	t.Run("bare repository", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		gitT(t, dir, "init", "-q", "--bare")
		if _, err := Take(t.Context(), dir, Options{}); !errors.Is(err, ErrBareRepo) {
			t.Fatalf("got %v, want ErrBareRepo", err)
		}
	})

	t.Run("not a repository", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, dir, "f", "f\n")
		_, err := Take(t.Context(), dir, Options{})
		if !errors.Is(err, ErrNotRepo) {
			t.Fatalf("got %v, want ErrNotRepo", err)
		}
		if _, err := List(t.Context(), filepath.Join(dir, "missing")); !errors.Is(err, ErrNotRepo) {
			t.Fatalf("missing dir: got %v, want ErrNotRepo", err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("non-repo dir was written to: %v", ents)
		}
	})

	t.Run("inside .git", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, map[string]string{"a": "a\n"})
		if _, err := Take(t.Context(), filepath.Join(dir, ".git"), Options{}); !errors.Is(err, ErrNotRepo) {
			t.Fatalf("got %v, want ErrNotRepo", err)
		}
	})

	t.Run("subdirectory", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, baseFiles)
		write(t, dir, "top-level-new.txt", "x\n")
		s, err := Take(t.Context(), filepath.Join(dir, "src", "lib"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Dir != dir || s.Counts.Added != 1 {
			t.Errorf("snapshot from a subdirectory: dir %s counts %+v, want the whole tree of %s", s.Dir, s.Counts, dir)
		}
	})

	t.Run("index.lock held by someone else", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, map[string]string{"a": "a\n"})
		write(t, dir, "a", "changed\n")
		lock := filepath.Join(dir, ".git", "index.lock")
		if err := os.WriteFile(lock, []byte("someone else's"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := captureState(t, dir)
		// A snapshot never needs the user's index lock.
		if _, err := Take(t.Context(), dir, Options{ID: "t_locked01"}); err != nil {
			t.Fatal(err)
		}
		assertSameState(t, before, captureState(t, dir))
		if b, _ := os.ReadFile(lock); string(b) != "someone else's" {
			t.Fatal("the other process's index.lock was touched")
		}
		// Committing on the branch does; it waits, then says who holds it.
		_, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_locked01", Task: "x", All: true})
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "index.lock") {
			t.Fatalf("got %v, want ErrLocked naming index.lock", err)
		}
		assertSameState(t, before, captureState(t, dir))
	})

	t.Run("linked worktree", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, baseFiles)
		wt := filepath.Join(t.TempDir(), "linked")
		gitT(t, dir, "worktree", "add", "-q", "-b", "other", wt)
		write(t, wt, "README.md", "in the linked worktree\n")
		write(t, wt, "only-here.txt", "x\n")
		gitT(t, wt, "add", "only-here.txt")
		mainBefore := captureState(t, dir)
		wtIndex, _ := os.ReadFile(filepath.Join(dir, ".git", "worktrees", "linked", "index"))
		wtFiles := workFiles(t, wt, nil)
		s, err := Take(t.Context(), wt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Branch != "other" || s.Dir != wt || s.Counts != (Counts{Added: 1, Modified: 1}) {
			t.Errorf("snapshot %+v", s)
		}
		if d := diffFiles(wtFiles, treeFiles(t, wt, s.Tree)); d != "" {
			t.Errorf("snapshot is not the linked worktree:\n%s", d)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, ".git", "worktrees", "linked", "index")); string(after) != string(wtIndex) {
			t.Error("the linked worktree's index changed")
		}
		if d := diffFiles(wtFiles, workFiles(t, wt, nil)); d != "" {
			t.Errorf("linked worktree changed:\n%s", d)
		}
		assertSameState(t, mainBefore, captureState(t, dir))
	})

	t.Run("ID rules", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, map[string]string{"a": "a\n"})
		for _, bad := range []string{"../x", "a/b", "x.lock", "-x", "has space", strings.Repeat("x", 65)} {
			if _, err := Take(t.Context(), dir, Options{ID: bad}); !errors.Is(err, ErrBadID) {
				t.Errorf("ID %q: got %v, want ErrBadID", bad, err)
			}
		}
		if _, err := Take(t.Context(), dir, Options{ID: "t_abc12345"}); err != nil {
			t.Fatal(err)
		}
		if _, err := Take(t.Context(), dir, Options{ID: "t_abc12345"}); !errors.Is(err, ErrExists) {
			t.Fatalf("second snapshot with the same ID: got %v, want ErrExists", err)
		}
	})
}

func TestGitMissing(t *testing.T) {
	dir := newRepo(t, map[string]string{"a": "a\n"})
	t.Setenv("PATH", t.TempDir())
	_, err := Take(t.Context(), dir, Options{})
	if !errors.Is(err, ErrGitMissing) {
		t.Fatalf("got %v, want ErrGitMissing", err)
	}
}

func TestListGetPrune(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"a": "a\n"})
	for _, id := range []string{"t_aaa11111", "t_aab22222", "s_zzz33333"} {
		if _, err := Take(t.Context(), dir, Options{ID: id, Label: "label of " + id}); err != nil {
			t.Fatal(err)
		}
	}
	snaps, err := List(t.Context(), dir)
	if err != nil || len(snaps) != 3 {
		t.Fatalf("list: %d snapshots, %v", len(snaps), err)
	}
	for i := 1; i < len(snaps); i++ {
		if snaps[i].Time.After(snaps[i-1].Time) {
			t.Errorf("list not newest first: %v", snaps)
		}
	}
	for _, tc := range []struct {
		prefix, want string
		err          error
	}{
		{"t_aaa", "t_aaa11111", nil},
		{"t_aaa11111", "t_aaa11111", nil},
		{"s", "s_zzz33333", nil},
		{"t_aa", "", ErrAmbiguous},
		{"nope", "", ErrNotFound},
		{"", "", ErrNotFound},
	} {
		s, err := Get(t.Context(), dir, tc.prefix)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("Get(%q): got %v, want %v", tc.prefix, err, tc.err)
			}
			continue
		}
		if err != nil || s.ID != tc.want || s.Label != "label of "+tc.want {
			t.Errorf("Get(%q) = %+v, %v; want %s", tc.prefix, s, err, tc.want)
		}
	}
	if pruned, err := Prune(t.Context(), dir, time.Hour); err != nil || len(pruned) != 0 {
		t.Fatalf("prune older than 1h: %v %v", pruned, err)
	}
	pruned, err := Prune(t.Context(), dir, 0)
	if err != nil || len(pruned) != 3 {
		t.Fatalf("prune all: %d, %v", len(pruned), err)
	}
	if out := gitT(t, dir, "for-each-ref", RefPrefix); out != "" {
		t.Errorf("refs left after prune: %s", out)
	}
}

func TestParseRaw(t *testing.T) {
	out := ":100644 100755 aaaa bbbb M\x00x y\x00:000000 120000 0000 cccc A\x00new\nline\x00:100644 000000 dddd 0000 D\x00gone\x00"
	got, err := parseRaw([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{"M", "x y", "100644", "100755"},
		{"A", "new\nline", "000000", "120000"},
		{"D", "gone", "100644", "000000"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, err := parseRaw([]byte("garbage\x00")); err == nil {
		t.Error("garbage parsed without error")
	}
}

func TestMessageRoundTrip(t *testing.T) {
	in := Snapshot{ID: "t_x1", Label: "a label", Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Base: "abc", Branch: "feature/x", Dirty: true, Counts: Counts{1, 2, 3}}
	out := Snapshot{ID: "t_x1"}
	if !parseMessage(formatMessage(&in), &out) {
		t.Fatal("own message not recognised")
	}
	if out != in {
		t.Errorf("got %+v, want %+v", out, in)
	}
	other := Snapshot{ID: "t_other"}
	if parseMessage(formatMessage(&in), &other) {
		t.Error("message of another ID recognised")
	}
	unborn := Snapshot{ID: "s_1", Time: in.Time}
	back := Snapshot{ID: "s_1"}
	parseMessage(formatMessage(&unborn), &back)
	if back != unborn {
		t.Errorf("unborn: got %+v, want %+v", back, unborn)
	}
}

func TestOneLineAndIDs(t *testing.T) {
	if got := oneLine("  a\n b\t c  "); got != "a b c" {
		t.Errorf("oneLine = %q", got)
	}
	seen := map[string]bool{}
	for range 100 {
		id := NewID()
		if !ValidID(id) || len(id) != 10 || !strings.HasPrefix(id, "s_") || seen[id] {
			t.Fatalf("bad or repeated ID %q", id)
		}
		seen[id] = true
	}
}

func TestCanceled(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"a": "a\n"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	before := captureState(t, dir)
	if _, err := Take(ctx, dir, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	assertSameState(t, before, captureState(t, dir))
}
