package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/sandbox"
)

// TestNoLinks: a path with a link anywhere in it is refused, a real one
// is not.
func TestNoLinks(t *testing.T) {
	root := Real(t.TempDir())
	dir := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "lnk")); err != nil {
		t.Fatal(err)
	}
	if err := NoLinks(dir); err != nil {
		t.Errorf("NoLinks(%s): %v", dir, err)
	}
	for _, p := range []string{filepath.Join(root, "lnk", "b"), filepath.Join(root, "lnk"), filepath.Join(root, "gone"), "rel/x", root + "/a/../a"} {
		if err := NoLinks(p); err == nil {
			t.Errorf("NoLinks(%s) = nil", p)
		}
	}
}

// TestCheckPlace: a child's folder stays in its parent's with no link;
// the git directory made writable is the dispatch's or inside the folder.
func TestCheckPlace(t *testing.T) {
	root := Real(t.TempDir())
	parent := filepath.Join(root, "parent")
	child := filepath.Join(parent, "child")
	other := filepath.Join(root, "other", ".git")
	for _, d := range []string{filepath.Join(child, ".git"), other, filepath.Join(parent, ".git", "runner-worktrees", "t_1")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("..", filepath.Join(parent, "lnk")); err != nil {
		t.Fatal(err)
	}
	pgit := filepath.Join(parent, ".git")
	for _, c := range []struct {
		name                           string
		dir, common, within, gitCommon string
		ok                             bool
	}{
		{"the child, its parent's git", child, pgit, parent, pgit, true},
		{"the child, its own git", child, filepath.Join(child, ".git"), parent, "", true},
		{"a task from outside, a worktree's common", "/x/wt", other, "", other, true},
		{"no git", child, "", parent, "", true},
		{"a link in the folder", filepath.Join(parent, "lnk", "parent", "child"), pgit, parent, pgit, false},
		{"outside the parent", filepath.Join(root, "other"), "", parent, "", false},
		{"another repository's git", child, other, parent, pgit, false},
		{"another repository's git, from outside", child, other, "", pgit, false},
		{"a worktree of the repository", filepath.Join(pgit, "runner-worktrees", "t_1"), pgit, parent, pgit, true},
	} {
		err := CheckPlace(c.dir, c.common, c.within, c.gitCommon)
		if (err == nil) != c.ok {
			t.Errorf("%s: CheckPlace(%q, %q, %q, %q) = %v", c.name, c.dir, c.common, c.within, c.gitCommon, err)
		}
	}
}

// TestGitFilesHold: inside a task's sandbox (SpecFor, under bwrap) no
// file git reads as configuration or hooks can be written or made — the
// main git directory's config.worktree and commondir, a submodule's
// config, config.worktree and hooks, a new submodule's git directory —
// while commits still work, in the repository and in its submodule.
func TestGitFilesHold(t *testing.T) {
	bwrap, err := sandbox.Check(t.Context())
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := Real(t.TempDir())
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	sub, proj := filepath.Join(root, "subrepo"), filepath.Join(root, "proj")
	for _, d := range []string{sub, proj} {
		git(root, "init", "-q", "-b", "main", d)
		git(d, "commit", "-q", "--allow-empty", "-m", "initial")
	}
	git(proj, "submodule", "add", "-q", sub, "sub")
	git(proj, "commit", "-q", "-m", "sub")
	common := filepath.Join(proj, ".git")
	mod := filepath.Join(common, "modules", "sub")
	if _, err := os.Stat(filepath.Join(mod, "config.worktree")); err == nil {
		t.Fatal("config.worktree there before the sandbox")
	}
	spec := SpecFor(Place{Dir: proj, GitCommon: common}, nil)
	attempts := map[string]string{
		"config.worktree":                 `echo '[core] fsmonitor = touch "$OUT/pwned"' >> .git/config.worktree`,
		"commondir":                       `echo "$OUT" > .git/commondir`,
		"commondir replaced":              `rm -f .git/commondir && echo "$OUT" > .git/commondir`,
		"a submodule's config":            `echo '[core] fsmonitor = touch "$OUT/pwned"' >> .git/modules/sub/config`,
		"a submodule's config.worktree":   `echo x > .git/modules/sub/config.worktree`,
		"a submodule's hook":              `echo 'touch "$OUT/pwned"' > .git/modules/sub/hooks/post-checkout`,
		"a submodule's info":              `echo '* filter=x' > .git/modules/sub/info/attributes`,
		"a new submodule's git directory": `mkdir -p .git/modules/new && echo x > .git/modules/new/config`,
		"info/exclude":                    `echo x >> .git/info/exclude`,
		"remotes":                         `echo 'URL: /x' > .git/remotes/origin`,
	}
	run := func(script string) ([]byte, error) {
		argv := sandbox.Argv(bwrap, spec, []string{"sh", "-c", script})
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "OUT="+root)
		return cmd.CombinedOutput()
	}
	for name, script := range attempts {
		if out, err := run(script); err == nil {
			t.Errorf("%s: the attempt succeeded: %s\n%s", name, script, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(common, "commondir")); err != nil || strings.TrimSpace(string(b)) != "." {
		t.Errorf("commondir: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(root, "pwned")); err == nil {
		t.Error("something ran")
	}
	// what the agent does of git still works
	work := `set -e
echo b > b.txt && git add b.txt && git -c user.name=t -c user.email=t@t commit -q -m b
cd sub && echo c > c.txt && git add c.txt && git -c user.name=t -c user.email=t@t commit -q -m c
cd .. && git add sub && git -c user.name=t -c user.email=t@t commit -q -m sub2 && git status --short`
	if out, err := run(work); err != nil {
		t.Fatalf("commits in the sandbox: %v\n%s", err, out)
	}
	cmd := exec.Command("git", "-C", proj, "log", "--oneline")
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "sub2") {
		t.Errorf("git log: %s %v", out, err)
	}
}
