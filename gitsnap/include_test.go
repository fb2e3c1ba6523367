package gitsnap

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIncluded is the matcher: .gitignore's syntax, only untracked files
// that git ignores, a nested file's patterns relative to its directory.
func TestIncluded(t *testing.T) {
	base := map[string]string{
		".gitignore":  ".env\n.env.*\nnode_modules/\nconfig/\n*.log\nlocal/\n/sub/.env.local\ntracked.env\n",
		"tracked.env": "committed before it was ignored\n",
		"app/main.go": "package main\n",
	}
	ignored := map[string]string{
		".env": "S=1\n", ".env.example": "E=1\n", ".env.test": "T=1\n",
		"config/a.json": "{}", "config/b.json": "{}",
		"node_modules/a/i.js": "1", "node_modules/b/j.js": "2",
		"app/deep/x.log": "l", "top.log": "t",
		"local/keep.txt": "k", "local/drop.txt": "d",
		"sub/.env.local": "L", "sub/other.txt": "o",
		"untracked.txt": "not ignored",
	}
	cases := []struct {
		name      string
		top, sub  string // .worktreeinclude at the top, in sub/ ("" none)
		dir       string // the project's directory, below the top
		want      []string
		wantError string
	}{
		{name: "no file: nothing", want: nil},
		{name: "a name matches at any depth", top: ".env\nx.log\n", want: []string{".env", "app/deep/x.log"}},
		{name: "glob and negation", top: ".env*\n!.env.example\n", want: []string{".env", ".env.test", "sub/.env.local"}},
		{name: "a directory pattern takes its files", top: "config/\n", want: []string{"config/a.json", "config/b.json"}},
		{name: "anchored", top: "/x.log\n/top.log\n", want: []string{"top.log"}},
		{name: "double star", top: "**/x.log\nnode_modules/**/j.js\n", want: []string{"app/deep/x.log", "node_modules/b/j.js"}},
		{name: "inside a directory, negated", top: "local/*\n!local/drop.txt\n", want: []string{"local/keep.txt"}},
		{name: "comments and blanks", top: "# the env\n\n.env\n", want: []string{".env"}},
		{name: "tracked and not-ignored files never", top: "tracked.env\nuntracked.txt\napp/main.go\n", want: nil},
		{name: "the project's own file, relative to it", sub: ".env.local\nother.txt\n", dir: "sub", want: []string{"sub/.env.local"}},
		{name: "both files", top: ".env\n", sub: ".env.local\n", dir: "sub", want: []string{".env", "sub/.env.local"}},
		{name: "a nested file without one at the top or in dir: nothing", sub: ".env.local\n", want: nil},
		{name: "a pattern that climbs out is refused", top: ".env\n../secret\n", wantError: `line 2: "../secret" leaves the repository`},
		{name: "so is one in the middle", top: "a/../../b\n", wantError: "leaves the repository"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := newRepo(t, base)
			for n, c := range ignored {
				write(t, dir, n, c)
			}
			if tc.top != "" {
				write(t, dir, IncludeFile, tc.top)
			}
			if tc.sub != "" {
				write(t, dir, "sub/"+IncludeFile, tc.sub)
			}
			gitT(t, dir, "add", "-f", "tracked.env") // tracked though .gitignore names it
			gitT(t, dir, "commit", "-q", "-m", "tracked")
			top, got, err := Included(context.Background(), filepath.Join(dir, tc.dir))
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("err = %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if real, _ := filepath.EvalSymlinks(dir); top != real && top != dir {
				t.Errorf("top = %s, want %s", top, dir)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Included = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestIncludedListsLinksAsThemselves: a symlink is listed as the link (the
// copy decides), and git does not walk through a linked directory.
func TestIncludedListsLinksAsThemselves(t *testing.T) {
	dir := newRepo(t, map[string]string{".gitignore": ".env\nlinked\n"})
	outside := t.TempDir()
	write(t, outside, "secret", "s")
	write(t, outside, "d/inner.env", "i")
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, ".env")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "d"), filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, IncludeFile, ".env\nlinked\n*.env\n")
	_, got, err := Included(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".env", "linked"}; !slices.Equal(got, want) {
		t.Errorf("Included = %q, want %q", got, want)
	}
}
