package remote

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// hasSeq reports whether argv holds seq in a row.
func hasSeq(argv []string, seq ...string) bool {
	for i := range argv {
		if len(argv)-i >= len(seq) && slices.Equal(argv[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}

// TestSandboxArgv: the host's bwrap runs the agent in a work tree with
// the task's folder, the repository's git directory and the CLI's folders
// there writable, git's control files and the work tree's .git file
// read-only, the login's runtime folder
// hidden, the tmux socket masked, and the door's socket named; the
// folders are made there first.
func TestSandboxArgv(t *testing.T) {
	info := "/usr/bin/bwrap\n1000\n/home/u\n/run/user/1000\n/srv/tmux/runner"
	c := box(answer{key: "command -v bwrap", out: info}, answer{key: "mkdir -p --"}, answer{key: "config.worktree"})
	task := &state.Task{ID: "t_abc", Dir: "/src/wt", Tmux: state.TmuxTarget{Host: "box"}}
	files := FilesIn("/r/t_abc")
	prof := &profile.Profile{Name: "claude", SandboxPaths: []string{"~/.claude/", "~/.claude.json"}}
	argv, writable, err := SandboxArgv(t.Context(), task, c, prof, files, nil, []string{"/usr/bin/claude", "-p"}, []string{"$XDG/x/"}, "/src/app/.git")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"/src/wt", "/src/app/.git", "/home/u/.claude", "/home/u/.claude.json"} {
		if !slices.Contains(writable, w) {
			t.Errorf("writable %q lacks %s", writable, w)
		}
	}
	for _, seq := range [][]string{
		{"/usr/bin/bwrap", "--setenv", door.EnvDoor, files.Door},
		{"--bind-try", "/src/app/.git", "/src/app/.git"},
		{"--ro-bind-try", "/src/app/.git/hooks", "/src/app/.git/hooks"},
		{"--ro-bind-try", "/src/app/.git/config", "/src/app/.git/config"},
		{"--ro-bind-try", "/src/wt/.git", "/src/wt/.git"},
		{"--tmpfs", "/run/user/1000"},
		{"/usr/bin/claude", "-p"},
	} {
		if !hasSeq(argv, seq...) {
			t.Errorf("argv lacks %q:\n%q", seq, argv)
		}
	}
	if !strings.Contains(strings.Join(argv, " "), "/srv/tmux/runner") {
		t.Errorf("the tmux socket there is not covered: %q", argv)
	}
	if c.ran[0][len(c.ran[0])-1] != "runner" {
		t.Errorf("the socket asked about is %q, want the host's server's", c.ran[0])
	}
	mkdir := c.ran[1]
	if !slices.Contains(mkdir, "/home/u/.claude") || !slices.Contains(mkdir, "/r/t_abc/door") || slices.Contains(mkdir, "/home/u/.claude.json") {
		t.Errorf("made %q; want the CLI's folders (not its files) and the door's", mkdir)
	}
	if gitFiles := c.ran[2]; !slices.Contains(gitFiles, "/src/app/.git") || !slices.Contains(gitFiles, "hooks/") {
		t.Errorf("git's control files made with %q; want them in the repository's git directory", gitFiles)
	}
}

// TestSandboxArgvErrors: bwrap gone from the host since the
// dispatch's check is a usage error naming the host; a failed folder
// there names the task.
func TestSandboxArgvErrors(t *testing.T) {
	task := &state.Task{ID: "t_abc", Dir: "/src/app", Tmux: state.TmuxTarget{Host: "box"}}
	prof := &profile.Profile{Name: "claude"}
	c := box(answer{key: "command -v bwrap", out: "\n1000\n/home/u\n\n/tmp/tmux-1000/runner"})
	_, _, err := SandboxArgv(t.Context(), task, c, prof, FilesIn("/r/t_abc"), nil, []string{"/usr/bin/claude"}, nil, "")
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "not installed on host box") {
		t.Errorf("no bwrap: %v; want a usage error", err)
	}
	full := errors.New("No space left on device")
	c = box(answer{key: "command -v bwrap", out: "/usr/bin/bwrap\n0\n/root\n\n/tmp/tmux-0/runner"}, answer{key: "mkdir", err: full})
	_, _, err = SandboxArgv(t.Context(), task, c, prof, FilesIn("/r/t_abc"), nil, []string{"/usr/bin/claude"}, nil, "")
	if !errors.Is(err, full) || !strings.Contains(err.Error(), "task t_abc: sandbox directories on host box") {
		t.Errorf("mkdir failed: %v", err)
	}
}

// TestMirrorLostAfter: a bad RUNNER_HOST_LOST_AFTER is refused before
// the host is reached.
func TestMirrorLostAfter(t *testing.T) {
	for _, v := range []string{"soon", "0s", "-5s", "10"} {
		_, _, err := Mirror(t.Context(), nil, nil, &state.Task{ID: "t_abc"}, v)
		if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), LostAfterVar) {
			t.Errorf("%s=%q: %v; want a usage error naming it", LostAfterVar, v, err)
		}
	}
}
