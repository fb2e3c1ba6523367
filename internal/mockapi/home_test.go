package mockapi

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// TestSweep: homes earlier runs' agents left (written again after their
// removal) are removed once stale; a fresh one, and what is not a home,
// stay.
func TestSweep(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Join(p, ".claude"), 0o700); err != nil {
			t.Fatal(err)
		}
		at := clock.Real(clock.Now().Add(-age)) // an mtime: on the system's clock
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old, fresh, other := mk("home123", 7*time.Hour), mk("home456", time.Minute), mk("keep", 7*time.Hour)
	sweep(base, clock.Now().Add(-staleHome))
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a stale home stays: %v", err)
	}
	for _, p := range []string{fresh, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
