// Package sandbox confines an agent's process tree with bubblewrap (bwrap)
// on Linux (Argv) and with Seatbelt's sandbox-exec on macOS (SeatbeltArgv,
// SeatbeltProfile); WrapLocal and CheckLocal pick this system's. With bwrap:
// the whole file system read-only, a private /tmp, /dev limited to what a
// terminal program needs, its own process and IPC namespaces, every
// capability dropped, and read-write only the paths a task needs — its
// folder, the git directory its commits go to, the agent CLI's own state
// directories under HOME, and what the user adds. Nothing of runner's is
// reachable inside: its state directory and the user's runtime directory
// are hidden under empty file systems, its tmux socket is covered, and
// the git files that say what git runs (config, hooks, info/attributes,
// a worktree's .git file) are bound read-only, their directory pinned so
// it cannot be renamed away. What the agent needs of runner comes through
// the openings of a Spec: the task's events file (written), its hook
// files (read), and the door directory holding the socket of package
// door. The network stays on (the model API). A write anywhere else is
// refused by the kernel (EROFS), which the agent sees as any failed tool
// call.
//
// Seatbelt allows or denies by path, with the same Spec, and has no bind
// mounts (ErrSeatbeltBinds) and no private /tmp (the task's temp folder
// instead).
//
// It builds argv, makes the missing directories a task may write (Prepare,
// and the temp folder on macOS), and checks that the sandbox program
// works by running it once (Check, CheckLocal); it runs nothing else.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/subproc"
)

// Program is bubblewrap's executable.
const Program = "bwrap"

// InstallHint says how to get bwrap.
const InstallHint = "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap)"

// ErrUnavailable is wrapped when bwrap is missing or cannot make a sandbox
// here (no user namespaces, a container that forbids mounts).
var ErrUnavailable = errors.New("bubblewrap cannot make a sandbox here")

// Spec is what a sandbox shows its agent. Every path is absolute; Argv
// binds them in the order of the fields, so a later one wins inside an
// earlier one.
type Spec struct {
	// Readable are bound read-only again over the private /tmp (what the
	// agent reads that lives under /tmp: its program, HOME in a test).
	Readable []string
	// Writable are bound read-write (see Writable).
	Writable []string
	// Binds are bound read-write, each copy (the first) over the path the
	// agent sees (the second): the task's copies of its CLI's
	// directories.
	Binds [][2]string
	// Pinned are directories inside Writable bound onto themselves, so
	// that the agent cannot rename or remove them (a mount point is
	// busy): the repository's git directory.
	Pinned []string
	// Hidden are directories covered by an empty file system: runner's
	// state directory, the user's runtime directory (its D-Bus, its
	// sockets).
	Hidden []string
	// Masked are files covered by an empty one (/dev/null): a tmux
	// socket outside /tmp and outside Hidden.
	Masked []string
	// ReadOnly are bound read-only where they are, over any of the
	// above: git's config, hooks and info of the repository, the other
	// tasks' worktrees in it, runner's config file and agent files.
	ReadOnly []string
	// Open are bound read-write last, over any of the above: the task's
	// own worktree (inside the git directory, under ReadOnly's worktree
	// folder) and the task's events file, which its hook appends to
	// (inside Hidden).
	Open []string
	// OpenRO are bound read-only last: the task's hook files and its door
	// directory (the socket of package door, which the agent connects to
	// but cannot replace), inside Hidden.
	OpenRO []string
	// Sockets are the unix sockets the agent may connect to: the door's.
	// Under bwrap a socket in OpenRO is reachable already; macOS's
	// sandbox refuses every other.
	Sockets []string
	// Root says bwrap runs as root: the agent then runs as root of a user
	// namespace of its own, with no capability but CAP_SETFCAP in it, so
	// that it may make namespaces of its own (Codex's sandbox, a
	// browser's) and cannot undo a bind (mounts handed to a user
	// namespace are locked). Without root, bwrap makes that namespace by
	// itself.
	Root bool
}

// Argv returns the command line that runs cmd under bwrap (the program at
// bwrap) as spec says: the root read-only, a minimal /dev, a /proc of the
// sandbox's own processes (--unshare-pid: no process outside is seen, so
// none can be reached through /proc/PID/root or ptrace), a private /tmp,
// every capability dropped (as root, bwrap would keep them: a remount
// would undo the read-only binds; see Spec.Root). TMPDIR is that private
// /tmp: a TMPDIR of the user's outside it (under HOME, read-only there)
// would fail every program that makes a temporary file, the CLI's own
// start among them. The agent dies with bwrap
// (--die-with-parent), which tmux's signals reach. --new-session is not
// used: a terminal program needs its controlling terminal, and the only
// terminal it could push input into (TIOCSTI) is its own pane.
func Argv(bwrap string, spec Spec, cmd []string) []string {
	argv := []string{bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--unshare-ipc", "--proc", "/proc", "--tmpfs", "/tmp",
		"--setenv", "TMPDIR", "/tmp"}
	for _, r := range spec.Readable {
		argv = append(argv, "--ro-bind-try", r, r)
	}
	for _, w := range spec.Writable {
		argv = append(argv, "--bind-try", w, w)
	}
	for _, b := range spec.Binds {
		argv = append(argv, "--bind", b[0], b[1])
	}
	for _, p := range spec.Pinned {
		argv = append(argv, "--bind-try", p, p)
	}
	for _, h := range spec.Hidden {
		argv = append(argv, "--tmpfs", h)
	}
	for _, m := range spec.Masked {
		argv = append(argv, "--ro-bind", "/dev/null", m)
	}
	for _, r := range spec.ReadOnly {
		argv = append(argv, "--ro-bind-try", r, r)
	}
	for _, d := range spec.Open {
		argv = append(argv, "--bind-try", d, d)
	}
	for _, d := range spec.OpenRO {
		argv = append(argv, "--ro-bind-try", d, d)
	}
	argv = append(argv, "--cap-drop", "ALL")
	if spec.Root {
		// Root of its own user namespace: CAP_SETFCAP there lets it map
		// uid 0 into a namespace of its own (Linux ≥ 5.12 asks for it);
		// in the machine's namespace it has no capability at all.
		argv = append(argv, "--unshare-user", "--uid", "0", "--gid", "0", "--cap-add", "CAP_SETFCAP")
	}
	argv = append(argv, "--die-with-parent", "--")
	return append(argv, cmd...)
}

// Resolved returns paths and, for each that is a symbolic link or lies
// under one, the path it really is: bound again under a private /tmp, a
// link whose target is not bound leads nowhere (an npm bin/claude links
// to ../lib/node_modules/…).
func Resolved(paths []string) []string {
	out := append([]string(nil), paths...)
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			out = append(out, r)
		}
	}
	return out
}

// Readable returns what of paths (files and folders the agent reads: its
// program, the PATH, HOME) must be bound again under the private /tmp:
// the folders, as they really are (Resolved), that /tmp holds.
func Readable(paths []string) []string {
	var dirs []string
	for _, p := range Resolved(paths) {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			p = filepath.Dir(p)
		}
		dirs = append(dirs, p)
	}
	return UnderTmp(dirs)
}

// Exists returns those of paths that exist.
func Exists(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Covered reports whether p is hidden from a sandbox's agent by spec: under
// /tmp and not bound again, or under a Hidden directory.
func Covered(p string, spec Spec) bool {
	p = filepath.Clean(p)
	for _, h := range spec.Hidden {
		if Within(p, h) {
			return true
		}
	}
	if !Within(p, "/tmp") {
		return false
	}
	for _, b := range append(append([]string(nil), spec.Readable...), spec.Writable...) {
		if Within(p, b) {
			return false
		}
	}
	return true
}

// UnderTmp returns those of paths (cleaned, absolute) that /tmp holds: the
// private /tmp of Argv hides them unless bound again (Writable's rules
// apply).
func UnderTmp(paths []string) []string {
	var in []string
	for _, p := range paths {
		if filepath.IsAbs(p) && Within(filepath.Clean(p), "/tmp") && filepath.Clean(p) != "/tmp" {
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
		if len(out) > 0 && Within(p, out[len(out)-1]) {
			continue // sorted: a parent comes right before its children's run
		}
		out = append(out, p)
	}
	return out
}

// Within reports whether p is dir or inside it (both clean).
func Within(p, dir string) bool {
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
	cmd := subproc.Command(ctx, path, Argv(path, Spec{Root: os.Geteuid() == 0}, []string{"true"})[1:]...)
	if err := subproc.Run(cmd); err != nil {
		// err (a *subproc.Error) says how bwrap failed, its stderr's last
		// line with it.
		return "", fmt.Errorf("%w: %s: %w (a container may need --privileged or user namespaces; or %s)",
			ErrUnavailable, path, err, InstallHint)
	}
	return path, nil
}
