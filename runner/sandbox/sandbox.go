// Package sandbox confines an agent's process tree with bubblewrap (bwrap):
// the whole file system read-only, a private /tmp, and read-write only
// the paths a task needs — its folder, the git directory its commits go
// to, runner's state directory and tmux socket, the agent CLI's own state
// directories under HOME, and what the user adds. The network stays on
// (the model API). A write anywhere else is refused by the kernel
// (EROFS), which the agent sees as any failed tool call.
//
// It builds argv and checks that bwrap works; it runs nothing else.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Program is bubblewrap's executable.
const Program = "bwrap"

// InstallHint says how to get bwrap.
const InstallHint = "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap)"

// ErrUnavailable is wrapped when bwrap is missing or cannot make a sandbox
// here (no user namespaces, a container that forbids mounts).
var ErrUnavailable = errors.New("bubblewrap cannot make a sandbox here")

// Argv returns the command line that runs cmd under bwrap (the program
// at bwrap): the root read-only, /dev and a fresh /proc as usual, a private
// /tmp, then readable bound read-only over it (what the agent reads that
// lives under /tmp: its program, HOME in a test) and writable read-write
// (absolute paths, see Writable; a path under /tmp too). The agent dies
// with bwrap (--die-with-parent), which tmux's signals reach.
func Argv(bwrap string, readable, writable []string, cmd []string) []string {
	argv := []string{bwrap, "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}
	for _, r := range readable {
		argv = append(argv, "--ro-bind-try", r, r)
	}
	for _, w := range writable {
		argv = append(argv, "--bind-try", w, w)
	}
	argv = append(argv, "--die-with-parent", "--")
	return append(argv, cmd...)
}

// UnderTmp returns those of paths (cleaned, absolute) that /tmp holds: the
// private /tmp of Argv hides them unless bound again (Writable's rules
// apply).
func UnderTmp(paths []string) []string {
	var in []string
	for _, p := range paths {
		if filepath.IsAbs(p) && within(filepath.Clean(p), "/tmp") && filepath.Clean(p) != "/tmp" {
			in = append(in, p)
		}
	}
	return Writable(in)
}

// Writable returns paths cleaned, absolute ones only, without duplicates
// and without those inside another (bound with it), sorted: the binds of
// Argv, also what `runner status` shows.
func Writable(paths []string) []string {
	var clean []string
	for _, p := range paths {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		clean = append(clean, filepath.Clean(p))
	}
	slices.Sort(clean)
	clean = slices.Compact(clean)
	var out []string
	for _, p := range clean {
		if len(out) > 0 && within(p, out[len(out)-1]) {
			continue // sorted: a parent comes right before its children's run
		}
		out = append(out, p)
	}
	return out
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// Expand turns a profile's sandbox path into an absolute one: "~/x" is
// under home; "$VAR/x" and "${VAR}/x" under the variable's value from env
// (KEY=VALUE entries), "${VAR:-~/.d}/x" under its default when VAR is
// unset or empty. It is "" when it names an unset variable with no default
// or is not absolute after that. A trailing "/" marks a directory (see
// Prepare).
func Expand(p, home string, env []string) string {
	lookup := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	if strings.HasPrefix(p, "$") {
		name, rest, def := p[1:], "", ""
		if strings.HasPrefix(name, "{") {
			end := strings.IndexByte(name, '}')
			if end < 0 {
				return ""
			}
			name, rest = name[1:end], name[end+1:]
			name, def, _ = strings.Cut(name, ":-")
		} else if i := strings.IndexByte(name, '/'); i >= 0 {
			name, rest = name[:i], name[i:]
		}
		v := lookup(name)
		if v == "" {
			v = def
		}
		if v == "" {
			return ""
		}
		p = v + rest
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return ""
		}
		p = home + p[1:]
	}
	if !filepath.IsAbs(p) {
		return ""
	}
	if strings.HasSuffix(p, "/") {
		return filepath.Clean(p) + "/"
	}
	return filepath.Clean(p)
}

// Prepare makes the directories among paths (those ending in "/") that
// are missing, mode 0700, so a CLI's first start in the sandbox can write
// its state there (it could not make them in a read-only HOME), and
// returns paths without the marks.
func Prepare(paths []string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if d, ok := strings.CutSuffix(p, "/"); ok {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, fmt.Errorf("sandbox: make %s: %w", d, err)
			}
			p = d
		}
		out = append(out, p)
	}
	return out, nil
}

// Check finds bwrap in PATH and makes a sandbox with it once, the way Argv
// does; an error wraps ErrUnavailable and says what to do.
func Check(ctx context.Context) (string, error) {
	path, err := exec.LookPath(Program)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not installed (%s)", ErrUnavailable, Program, InstallHint)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, Argv(path, nil, nil, []string{"true"})[1:]...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s: %v: %s (a container may need --privileged or user namespaces; or %s)",
			ErrUnavailable, path, err, strings.TrimSpace(stderr.String()), InstallHint)
	}
	return path, nil
}
