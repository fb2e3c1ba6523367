package setup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func skipped(c Copied) map[string]string {
	m := map[string]string{}
	for _, s := range c.Skipped {
		m[s.Path] = s.Why
	}
	return m
}

// TestCopyIncluded: regular files copied with their mode; a symlink (out
// of the checkout or not) never followed; nothing overwritten; nothing
// written through a link in the worktree; the bounds kept.
func TestCopyIncluded(t *testing.T) {
	testCopyIncluded(t, CopyIncluded)
}

// TestCopyIncludedThere: the host's script does what CopyIncluded does
// (run here through sh, as the host's sh runs it).
func TestCopyIncludedThere(t *testing.T) {
	testCopyIncluded(t, shHere)
}

// shHere is CopyIncludedThere with the script run by this machine's sh.
func shHere(from, to string, paths []string) (Copied, error) {
	return copyThere(context.Background(), func(ctx context.Context, argv ...string) (string, error) {
		out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
		return string(out), err
	}, from, to, paths)
}

func testCopyIncluded(t *testing.T, copyFn func(from, to string, paths []string) (Copied, error)) {
	from, to, outside := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, from, ".env", "SECRET=1\n")
	writeFile(t, from, "config/local.json", "{}")
	writeFile(t, from, "tracked-there", "checkout's")
	writeFile(t, to, "tracked-there", "worktree's")
	writeFile(t, outside, "secret", "not yours")
	must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(from, "leak")))
	must(t, os.Symlink(".env", filepath.Join(from, "inner-link")))
	writeFile(t, from, "shared/x", "x")
	must(t, os.Symlink(outside, filepath.Join(to, "shared"))) // as worktree_setup's symlink makes
	c, err := copyFn(from, to, []string{".env", "config/local.json", "tracked-there", "leak", "inner-link", "shared/x", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".env", "config/local.json"}; !slices.Equal(c.Files, want) {
		t.Errorf("copied %q, want %q", c.Files, want)
	}
	if c.Bytes != int64(len("SECRET=1\n")+2) {
		t.Errorf("bytes = %d", c.Bytes)
	}
	b, _ := os.ReadFile(filepath.Join(to, ".env"))
	fi, _ := os.Stat(filepath.Join(to, ".env"))
	if string(b) != "SECRET=1\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf(".env in the worktree: %q %v", b, fi.Mode())
	}
	s := skipped(c)
	for p, why := range map[string]string{"leak": whyNotRegular, "inner-link": whyNotRegular, "tracked-there": whyExists, "shared/x": whyOutside} {
		if s[p] != why {
			t.Errorf("%s: skipped for %q, want %q", p, s[p], why)
		}
	}
	if s["gone"] == "" {
		t.Error("a file that is gone is not said")
	}
	if b, _ := os.ReadFile(filepath.Join(to, "tracked-there")); string(b) != "worktree's" {
		t.Errorf("overwrote the worktree's file: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(outside, "x")); err == nil {
		t.Error("wrote through the worktree's link out of it")
	}
	if _, err := os.Lstat(filepath.Join(to, "leak")); err == nil {
		t.Error("copied a link")
	}
	if sum := c.Summary(); !strings.Contains(sum, `2 file(s)`) || !strings.Contains(sum, `"leak" (not a regular file`) {
		t.Errorf("summary: %s", sum)
	}
}

func TestCopyIncludedBounds(t *testing.T) {
	t.Run("here", func(t *testing.T) { testCopyIncludedBounds(t, CopyIncluded) })
	t.Run("there", func(t *testing.T) { testCopyIncludedBounds(t, shHere) })
}

func testCopyIncludedBounds(t *testing.T, copyFn func(from, to string, paths []string) (Copied, error)) {
	defer func(f, b int64, n int) { MaxIncludeFileBytes, MaxIncludeBytes, MaxIncludeFiles = f, b, n }(MaxIncludeFileBytes, MaxIncludeBytes, MaxIncludeFiles)
	MaxIncludeFileBytes, MaxIncludeBytes, MaxIncludeFiles = 10, 15, 2
	from, to := t.TempDir(), t.TempDir()
	writeFile(t, from, "a", "12345678")
	writeFile(t, from, "big", "12345678901")
	writeFile(t, from, "b", "12345678") // 16 bytes with a: past the total
	writeFile(t, from, "c", "1")
	writeFile(t, from, "d", "1") // the third file: past the count
	c, err := copyFn(from, to, []string{"a", "big", "b", "c", "d"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "c"}; !slices.Equal(c.Files, want) {
		t.Errorf("copied %q, want %q", c.Files, want)
	}
	s := skipped(c)
	if !strings.HasPrefix(s["big"], whyTooBig) || !strings.HasPrefix(s["b"], whyTooMany) || !strings.HasPrefix(s["d"], whyTooMany) {
		t.Errorf("skipped: %q", s)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
