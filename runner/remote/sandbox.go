package remote

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/state"
)

// SandboxArgv is the bwrap argv of a sandboxed task on a host, and what it
// may write: the paths are the host's (the task's folder, the
// repository's common git dir gitCommon when not "" but for its config,
// hooks and info, the task's events file there alone; the host's tmux
// socket is covered and its runtime directory hidden),
// the CLI's state directories (the profile's sandbox paths and the user's
// extra) are made there, and bwrap is the host's.
func SandboxArgv(ctx context.Context, t *state.Task, c SandboxConn, prof *profile.Profile, files Files, penv, argv, extra []string, gitCommon string) ([]string, []string, error) {
	// One round trip (the dispatch checked that bwrap works there): where
	// bwrap is, whether we are root there, HOME there, and the socket tmux
	// there uses for this server.
	const script = `command -v bwrap || echo; id -u; printf '%s\n' "$HOME"
r=${XDG_RUNTIME_DIR:-/run/user/$(id -u)}; if [ -d "$r" ]; then printf '%s\n' "$r"; else echo; fi
case $1 in */*) printf '%s' "$1";; *) printf '%s' "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$1";; esac`
	info, err := c.Run(ctx, "sh", "-c", script, "sh", c.TC().Socket())
	if err != nil {
		return nil, nil, err
	}
	lines := strings.SplitN(info, "\n", 5)
	if len(lines) < 5 || !strings.HasPrefix(lines[0], "/") {
		return nil, nil, fault.Usagef("--sandbox: bwrap is not installed on host %s any more (%s there)", c.Host().Name, sandbox.InstallHint)
	}
	bwrap, root, home, runtime, sock := lines[0], strings.TrimSpace(lines[1]) == "0", lines[2], lines[3], lines[4]
	// The task's files there are written by tmux and runner outside; the
	// agent's hook appends to its events file alone.
	paths := []string{t.Dir}
	if gitCommon != "" {
		paths = append(paths, gitCommon)
	}
	var dirs []string
	for _, p := range append(append([]string(nil), prof.SandboxPaths...), extra...) {
		x := sandbox.Expand(p, home, penv)
		if d, ok := strings.CutSuffix(x, "/"); ok {
			dirs = append(dirs, d)
			x = d
		}
		if x != "" {
			paths = append(paths, x)
		}
	}
	dirs = append(dirs, path.Dir(files.Door)) // the door's socket comes there once the supervisor forwards it
	if _, err := c.Run(ctx, append([]string{"sh", "-c", `umask 077 && mkdir -p -- "$@"`, "sh"}, dirs...)...); err != nil {
		return nil, nil, fmt.Errorf("task %s: sandbox directories on host %s: %w", t.ID, t.Tmux.Host, err)
	}
	spec := sandbox.Spec{Writable: sandbox.Writable(paths), Root: root, Open: []string{files.Events}, OpenRO: []string{files.HookDir, path.Dir(files.Door)},
		Sockets:  []string{files.Door},
		Readable: sandbox.UnderTmp([]string{path.Dir(argv[0]), path.Dir(c.Host().Runner), home})}
	if gitCommon != "" {
		// What says what git runs or where the repository is, read-only
		// and its folder pinned; what is missing of it is made first, so
		// that the agent cannot make it (as here: confine.GitReadOnly).
		// A submodule's git directory (modules/) is read-only whole there.
		spec.Pinned = []string{gitCommon}
		ro, err := gitControlThere(ctx, c, gitCommon)
		if err != nil {
			return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
		spec.ReadOnly = append(spec.ReadOnly, ro...)
	}
	// A worktree's .git file names its git directory: the agent must not
	// point it (and runner's git) elsewhere. The main tree's .git is the
	// common git dir itself, written but for what is read-only above (as
	// here: confine.SpecFor); bound read-only whole, the agent there could
	// not commit.
	if dotGit := path.Join(t.Dir, ".git"); dotGit != gitCommon {
		spec.ReadOnly = append(spec.ReadOnly, dotGit)
	}
	if err := openWorktree(ctx, c, t, gitCommon, &spec); err != nil {
		return nil, nil, err
	}
	if path.IsAbs(runtime) {
		spec.Hidden = []string{runtime} // the login's D-Bus, systemd and agent sockets
	}
	if !sandbox.Covered(sock, spec) {
		spec.Masked = []string{sock}
	}
	// The agent's runner finds its door there (RUNNER_DOOR, set by bwrap:
	// the pane's environment is the same for every site).
	out := sandbox.Argv(bwrap, spec, argv)
	out = slices.Insert(out, 1, "--setenv", door.EnvDoor, files.Door)
	return out, spec.Writable, nil
}

// ForwardDoor forwards task id's door socket on c's host (Files.Door)
// to its door here (local), over the host's shared connection, and makes
// its folder there first (a stale socket of an earlier connection
// removed): a sandboxed agent there reaches runner here as one here does,
// with the same allow-list. It is made again by each supervisor (runner
// resume after a lost connection).
func ForwardDoor(ctx context.Context, c *hosts.Conn, id, local string) error {
	if c == nil {
		return nil // a task here
	}
	dir, err := c.TaskPath(ctx, id)
	if err != nil {
		return err
	}
	files := FilesIn(dir)
	if _, err := c.Run(ctx, "sh", "-c", `umask 077 && mkdir -p -- "${1%/*}" && rm -f -- "$1"`, "sh", files.Door); err != nil {
		return err
	}
	return c.Transport().ForwardSocket(ctx, files.Door, local)
}

// gitControlThere makes what is missing of gitsnap.ControlFiles in the
// host's git directory gd (the folders; config.worktree empty; commondir
// as ".", itself) in one round trip, and returns their paths there.
func gitControlThere(ctx context.Context, c Conn, gd string) ([]string, error) {
	dirs, files := gitsnap.ControlFiles(true)
	const script = `cd "$1" || exit 1; shift; for d do case $d in */) mkdir -p -- "${d%/}" 2>/dev/null;; esac; done
[ -e config.worktree ] || [ -L config.worktree ] || : > config.worktree
[ -e commondir ] || [ -L commondir ] || echo . > commondir`
	args := []string{"sh", "-c", script, "sh", gd}
	var out []string
	for _, d := range dirs {
		args = append(args, d+"/")
		out = append(out, path.Join(gd, d))
	}
	for _, f := range files {
		out = append(out, path.Join(gd, f))
	}
	if _, err := c.Run(ctx, args...); err != nil {
		return nil, fmt.Errorf("git's files in %s on host %s: %w", gd, c.Host().Name, err)
	}
	return out, nil
}
