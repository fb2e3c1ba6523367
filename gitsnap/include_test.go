package gitsnap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/sshtest"
	"github.com/runner-cli/runner/internal/transport"
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

// TestIncludedRefusesWhatIsNotAFile: a .worktreeinclude an agent put in
// place as a FIFO (at the top, or further down, where git itself would
// open it), a link or a file over 1 MiB is refused at once, with what to
// do, here and over ssh; none of them holds the call.
func TestIncludedRefusesWhatIsNotAFile(t *testing.T) {
	cases := []struct {
		name  string
		make  func(t *testing.T, dir string)
		where string // the file the error names
		want  string
	}{
		{name: "a FIFO at the top", where: IncludeFile, want: "FIFO",
			make: func(t *testing.T, dir string) { mkfifo(t, filepath.Join(dir, IncludeFile)) }},
		{name: "a FIFO further down", where: "sub/" + IncludeFile, want: "FIFO",
			make: func(t *testing.T, dir string) {
				write(t, dir, IncludeFile, ".env\n")
				mkfifo(t, filepath.Join(dir, "sub", IncludeFile))
			}},
		{name: "a link", where: IncludeFile, want: "link",
			make: func(t *testing.T, dir string) {
				other := t.TempDir()
				write(t, other, "elsewhere", ".env\n")
				if err := os.Symlink(filepath.Join(other, "elsewhere"), filepath.Join(dir, IncludeFile)); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "over 1 MiB, a climbing pattern past the first MiB", where: IncludeFile, want: "over 1048576 bytes",
			make: func(t *testing.T, dir string) {
				write(t, dir, IncludeFile, strings.Repeat("# padding\n", maxIncludeFile/10+1)+"../secret\n")
			}},
	}
	run := func(t *testing.T, on func(context.Context) context.Context) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				dir := newRepo(t, map[string]string{".gitignore": ".env\n", "sub/a.txt": "a\n"})
				write(t, dir, ".env", "S=1\n")
				tc.make(t, dir)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan error, 1)
				go func() {
					_, _, err := Included(on(ctx), dir)
					done <- err
				}()
				var err error
				select {
				case err = <-done:
				case <-time.After(time.Minute): // a hang, not a measure
					t.Fatal("Included still waits on the file")
				}
				if err == nil || !errors.Is(err, ErrIncludeFile) && !strings.Contains(err.Error(), ErrIncludeFile.Error()) {
					t.Fatalf("err = %v, want %v", err, ErrIncludeFile)
				}
				for _, w := range []string{tc.where, tc.want, "remove it"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("err = %v, want it to say %q", err, w)
					}
				}
			})
		}
	}
	t.Run("here", func(t *testing.T) { run(t, func(ctx context.Context) context.Context { return ctx }) })
	t.Run("over ssh", func(t *testing.T) {
		srv := sshtest.Start(t)
		via := &transport.SSH{Destination: sshtest.Alias, Args: srv.SSHArgs(), ControlDir: t.TempDir()}
		if err := via.Prepare(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = via.Exit() })
		run(t, func(ctx context.Context) context.Context { return On(ctx, via) })
	})
}

// mkfifo makes a FIFO at p; at the test's end a writer opens it, so a
// reader still waiting on it (the test failed) is let go.
func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}
