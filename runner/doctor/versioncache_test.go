package doctor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// TestCachedVersion: the version is read once per file as it is; a
// changed file (an upgrade) is read again; a failure is not remembered.
func TestCachedVersion(t *testing.T) {
	dir := t.TempDir()
	cli, count := filepath.Join(dir, "cli"), filepath.Join(dir, "count")
	write := func(version string) {
		script := "#!/bin/sh\necho x >> " + count + "\necho '" + version + " (Fake CLI)'\n"
		if err := os.WriteFile(cli, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	runs := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x")
	}
	write("1.2.3")
	cache := filepath.Join(dir, "cache")
	for range 3 {
		if v, err := CachedVersion(t.Context(), cache, cli, []string{"--version"}); err != nil || v != "1.2.3" {
			t.Fatalf("CachedVersion = %q, %v", v, err)
		}
	}
	if runs() != 1 {
		t.Errorf("the CLI ran %d times for 3 reads of one file", runs())
	}
	write("1.2.40")
	later := clock.Now().Add(time.Minute)
	if err := os.Chtimes(cli, later, later); err != nil {
		t.Fatal(err)
	}
	if v, _ := CachedVersion(t.Context(), cache, cli, []string{"--version"}); v != "1.2.40" || runs() != 2 {
		t.Errorf("after an upgrade: %q, %d runs", v, runs())
	}
	if err := os.WriteFile(cli, []byte("#!/bin/sh\necho x >> "+count+"\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := CachedVersion(t.Context(), cache, cli, []string{"--version"}); err == nil || runs() != 4 {
		t.Errorf("a failing CLI: %v after %d runs (tried twice, none remembered)", err, runs())
	}
}

// A CLI slower to answer --version than doctor's VersionTimeout (a Node
// CLI's cold start on a loaded machine) still gives a task its version.
func TestCachedVersionSlowCLI(t *testing.T) {
	dir := t.TempDir()
	cli := filepath.Join(dir, "cli")
	script := "#!/bin/sh\nsleep " + strconv.Itoa(int(VersionTimeout/time.Second)+1) + "\necho '1.2.3 (Slow CLI)'\n"
	if err := os.WriteFile(cli, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadVersion(t.Context(), cli, []string{"--version"}); err == nil {
		t.Fatal("ReadVersion: no timeout")
	}
	if v, err := CachedVersion(t.Context(), t.TempDir(), cli, []string{"--version"}); err != nil || v != "1.2.3" {
		t.Fatalf("CachedVersion: %q, %v", v, err)
	}
}

// TestReadVersionTempDir: the CLI reads its version with a TMPDIR of its
// own, removed after (a bun CLI leaves its native libraries in it at
// every start), whatever the caller's is.
func TestReadVersionTempDir(t *testing.T) {
	dir := t.TempDir()
	cli, seen := filepath.Join(dir, "cli"), filepath.Join(dir, "seen")
	script := "#!/bin/sh\nprintf '%s' \"$TMPDIR\" > " + seen + "\n: > \"$TMPDIR/leak.so\"\necho '4.5.6 (Fake CLI)'\n"
	if err := os.WriteFile(cli, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	user := t.TempDir()
	t.Setenv("TMPDIR", user)
	if v, err := ReadVersion(t.Context(), cli, []string{"--version"}); err != nil || v != "4.5.6" {
		t.Fatalf("ReadVersion = %q, %v", v, err)
	}
	b, err := os.ReadFile(seen)
	if err != nil || len(b) == 0 || string(b) == user {
		t.Fatalf("the CLI's TMPDIR was %q (%v), want one of its own", b, err)
	}
	if _, err := os.Stat(string(b)); err == nil {
		t.Errorf("its TMPDIR %s is left after the read", b)
	}
	if ents, _ := os.ReadDir(user); len(ents) != 0 {
		t.Errorf("the user's TMPDIR holds %d files after the read", len(ents))
	}
}
