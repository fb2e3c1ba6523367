//go:build gendocs

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCLIDocsCurrent: docs/cli is what gen-docs writes from the commands
// as they are now; a change of a command's help, flags or examples must
// come with its page (scripts/gen-docs.sh).
func TestCLIDocsCurrent(t *testing.T) {
	dir := t.TempDir()
	a, flush := newApp(strings.NewReader(""), os.Stdout, os.Stderr, func(string) string { return "" })
	defer flush()
	if err := genDocs(a.newRootCmd(), dir); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadDir(filepath.Join("..", "..", "docs", "cli"))
	if err != nil {
		t.Fatalf("docs/cli: %v (run scripts/gen-docs.sh)", err)
	}
	names := func(es []os.DirEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	if !slices.Equal(names(want), names(have)) {
		t.Fatalf("docs/cli holds %d pages, the commands make %d: run scripts/gen-docs.sh and commit docs/cli", len(have), len(want))
	}
	for _, e := range want {
		w, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		h, _ := os.ReadFile(filepath.Join("..", "..", "docs", "cli", e.Name()))
		if string(w) != string(h) {
			t.Errorf("docs/cli/%s is stale: run scripts/gen-docs.sh and commit docs/cli", e.Name())
		}
	}
}
