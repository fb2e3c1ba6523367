package gitsnap

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

// TestMain makes every git in this package's tests hermetic: no system or
// global configuration, a fixed identity, a HOME of its own, and no
// repository discovery above the temp dir.
func TestMain(m *testing.M) {
	testenv.Scrub()
	home, err := os.MkdirTemp("", "gitsnap-home-")
	if err != nil {
		panic(err)
	}
	global := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(global, []byte("[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		panic(err)
	}
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": home,
		"GIT_CONFIG_GLOBAL": global, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.com",
		"GIT_COMMITTER_NAME": "Test Committer", "GIT_COMMITTER_EMAIL": "committer@example.com",
		"GIT_CEILING_DIRECTORIES": filepath.Dir(os.TempDir()),
	} {
		os.Setenv(k, v)
	}
	lockWait = 300 * time.Millisecond
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// gitT runs git in dir for a test and returns its trimmed output.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(dir, nil, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimRight(out, "\n")
}

func gitErr(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &GitError{Args: args, Dir: dir, Stderr: stderr.String(), Err: err}
	}
	return stdout.String(), nil
}

// write creates dir/name (and its parents) with content.
func write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a repository with one commit of the given files (none: an
// unborn HEAD).
func newRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	for name, content := range files {
		write(t, dir, name, content)
	}
	if len(files) > 0 {
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", "-q", "-m", "initial")
	}
	return dir
}

// entry is a file as git records it: mode and content (link target for
// symlinks; the commit ID for gitlinks).
type entry struct {
	Mode    string
	Content string
}

// workFiles reads the work tree (without .git and without the paths skip
// says to leave out) as git would record it.
func workFiles(t testing.TB, top string, skip func(string) bool) map[string]entry {
	t.Helper()
	files := map[string]entry{}
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			files[rel] = entry{"120000", target}
		case info.IsDir():
			if _, err := os.Stat(filepath.Join(p, ".git")); err == nil {
				files[rel] = entry{"160000", gitT(t, p, "rev-parse", "HEAD")}
				return filepath.SkipDir
			}
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			mode := "100644"
			if info.Mode()&0o100 != 0 {
				mode = "100755"
			}
			files[rel] = entry{mode, string(b)}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// treeFiles reads a tree object the same way.
func treeFiles(t testing.TB, dir, tree string) map[string]entry {
	t.Helper()
	files := map[string]entry{}
	out := gitT(t, dir, "ls-tree", "-r", "-z", "--full-tree", tree)
	var blobs []string
	var paths []string
	for _, rec := range strings.Split(out, "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if f[1] == "commit" {
			files[path] = entry{f[0], f[2]}
			continue
		}
		files[path] = entry{Mode: f[0]}
		blobs = append(blobs, f[2])
		paths = append(paths, path)
	}
	if len(blobs) == 0 {
		return files
	}
	// One cat-file --batch for all contents: "<oid> blob <size>\n<data>\n".
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(blobs, "\n") + "\n")
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file --batch: %v", err)
	}
	for _, path := range paths {
		header, rest, _ := bytes.Cut(raw, []byte("\n"))
		f := strings.Fields(string(header))
		if len(f) != 3 {
			t.Fatalf("cat-file header %q", header)
		}
		size, _ := strconv.Atoi(f[2])
		files[path] = entry{files[path].Mode, string(rest[:size])}
		raw = rest[size+1:]
	}
	return files
}

// gitRaw is gitT without trimming.
func gitRaw(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(dir, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffFiles(want, got map[string]entry) string {
	var b strings.Builder
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		w, wok := want[k]
		g, gok := got[k]
		switch {
		case !wok:
			b.WriteString("unexpected " + k + "\n")
		case !gok:
			b.WriteString("missing " + k + "\n")
		case w != g:
			b.WriteString("differs " + k + ": want " + w.Mode + " " + short(w.Content) + ", got " + g.Mode + " " + short(g.Content) + "\n")
		}
	}
	return b.String()
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// repoState is everything a snapshot must not change.
type repoState struct {
	Index     string // sha256 of the index file's bytes; "" when absent
	HeadFile  string // .git/HEAD's bytes
	Head      string // rev-parse HEAD; "" when unborn
	Refs      string // every ref but ours
	Stash     string // the stash reflog and git stash list; "" without a stash
	GitDir    string // the names at the top of .git
	WorkFiles map[string]entry
}

func captureState(t testing.TB, dir string) repoState {
	t.Helper()
	gitDir := filepath.Join(dir, ".git")
	var s repoState
	if b, err := os.ReadFile(filepath.Join(gitDir, "index")); err == nil {
		sum := sha256.Sum256(b)
		s.Index = hex.EncodeToString(sum[:])
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	s.HeadFile = string(b)
	s.Head, _ = gitErr(dir, nil, "rev-parse", "-q", "--verify", "HEAD")
	var refs []string
	for _, l := range strings.Split(gitT(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if !strings.HasPrefix(l, RefPrefix) {
			refs = append(refs, l)
		}
	}
	s.Refs = strings.Join(refs, "\n")
	if b, err := os.ReadFile(filepath.Join(gitDir, "logs", "refs", "stash")); err == nil {
		s.Stash = string(b) + gitT(t, dir, "stash", "list")
	}
	ents, err := os.ReadDir(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	s.GitDir = strings.Join(names, " ")
	s.WorkFiles = workFiles(t, dir, nil)
	return s
}

func assertSameState(t testing.TB, before, after repoState) {
	t.Helper()
	if before.Index != after.Index {
		t.Errorf("index bytes changed: %s -> %s", before.Index, after.Index)
	}
	if before.HeadFile != after.HeadFile || before.Head != after.Head {
		t.Errorf("HEAD changed: %q %q -> %q %q", before.HeadFile, before.Head, after.HeadFile, after.Head)
	}
	if before.Refs != after.Refs {
		t.Errorf("refs changed:\n%s\n->\n%s", before.Refs, after.Refs)
	}
	if before.Stash != after.Stash {
		t.Errorf("stash list changed: %q -> %q", before.Stash, after.Stash)
	}
	if before.GitDir != after.GitDir {
		t.Errorf(".git entries changed: %q -> %q", before.GitDir, after.GitDir)
	}
	if d := diffFiles(before.WorkFiles, after.WorkFiles); d != "" {
		t.Errorf("work tree changed:\n%s", d)
	}
}

// TestImports holds the package to what its doc says it uses: internal helpers alone: a leaf.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "internal/transport", "internal/untrusted")
}
