package mockapi

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// Home returns a fresh, empty home directory for an agent CLI, removed
// when the test ends, outside the system's temporary directory: a user's
// home is never under /tmp, and Codex refuses to make its sandbox helper
// while its home (CODEX_HOME) is under the temporary directory (/tmp when
// TMPDIR is not passed on, as dispatch does not), so a tool call of its
// then writes nothing. It goes under the user's cache directory
// (runner-tests/), else under /var/tmp.
// It is removed as RemoveAfter does.
func Home(tb testing.TB) string {
	tb.Helper()
	var dir string
	for _, base := range homeBases() {
		if err := os.MkdirAll(base, 0o700); err != nil {
			continue
		}
		sweepOnce.Do(func() { sweep(base, clock.Now().Add(-staleHome)) })
		d, err := os.MkdirTemp(base, "home")
		if err == nil {
			dir = d
			break
		}
	}
	if dir == "" {
		tb.Fatalf("mockapi: no directory outside the temporary directory for an agent's home (tried %v)", homeBases())
	}
	RemoveAfter(tb, dir)
	return dir
}

// staleHome is the age past which a home left in a base is an earlier
// run's: an agent CLI still writing as its test ended (Claude Code's
// telemetry, Copilot CLI's session end) made it again after its removal.
const staleHome = 6 * time.Hour

var sweepOnce sync.Once

// sweep removes the homes in base not changed since before: what earlier
// runs' agents left, so the runs of a machine do not add up.
func sweep(base string, before time.Time) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "home") {
			continue
		}
		if fi, err := e.Info(); err == nil && clock.Outside(fi.ModTime()).Before(before) {
			_ = os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
}

// RemoveAfter removes dir when the test ends, retrying for a while: an
// agent CLI killed with its tmux server may still write its session files
// for a moment.
func RemoveAfter(tb testing.TB, dir string) {
	tb.Cleanup(func() {
		deadline := clock.Now().Add(10 * time.Second)
		for {
			err := os.RemoveAll(dir)
			if err == nil || clock.Now().After(deadline) {
				if err != nil {
					tb.Logf("leaving %s: %v", dir, err)
				}
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// homeBases lists where Home may make its directories, best first: none
// under the temporary directory or /tmp.
func homeBases() []string {
	var out []string
	if c, err := os.UserCacheDir(); err == nil {
		out = append(out, filepath.Join(c, "runner-tests"))
	}
	out = append(out, filepath.Join("/var/tmp", "runner-tests-"+strconv.Itoa(os.Getuid())))
	keep := out[:0]
	for _, b := range out {
		if !underTemp(b) {
			keep = append(keep, b)
		}
	}
	return keep
}

// underTemp reports whether p is inside the temporary directory or /tmp.
func underTemp(p string) bool {
	for _, t := range []string{os.TempDir(), "/tmp"} {
		t = filepath.Clean(t)
		if p == t || strings.HasPrefix(p, t+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
