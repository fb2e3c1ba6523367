package tmuxctl

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		v  string
		ok bool
	}{
		{"3.0", true}, {"3.3a", true}, {"3.4", true}, {"10.1", true}, {"next-3.5", true},
		{"master", true}, // a build from source: no number to compare
		{"2.9a", false}, {"2.0", false}, {"1.8", false}, {"next-2.9", false},
	} {
		err := CheckVersion(tc.v)
		if (err == nil) != tc.ok {
			t.Errorf("CheckVersion(%q) = %v, want ok=%v", tc.v, err, tc.ok)
		}
	}
}

func TestVersion(t *testing.T) {
	c := testServer(t)
	v, err := c.Version(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := parseVersion(v); !ok || v == "" {
		t.Errorf("Version() = %q: no version number", v)
	}
	// Needs no server: the test server was never started.
	if panes, err := c.ListPanes(testCtx(t)); err != nil || len(panes) != 0 {
		t.Errorf("Version started a server: %v panes, %v", len(panes), err)
	}
}

func TestVersionNoTmux(t *testing.T) {
	c := New("x", WithBinary(filepath.Join(t.TempDir(), "no-tmux")))
	if _, err := c.Version(testCtx(t)); !errors.Is(err, ErrNoTmux) {
		t.Errorf("Version with a missing binary: %v, want ErrNoTmux", err)
	}
	fake := filepath.Join(t.TempDir(), "tmux")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if v, err := New("x", WithBinary(fake)).Version(testCtx(t)); err == nil {
		t.Errorf("Version with odd output = %q, want an error", v)
	}
}
