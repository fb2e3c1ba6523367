// Package confine says what a sandboxed task may touch, for package
// sandbox to enforce: the paths of its Spec (SpecFor: its folder, its
// repository's git directory but what says what git runs, the CLI's own
// state; hidden runner's state and the user's runtime directory; open its
// events file, hook files and door), its temp folder where the system has
// no private /tmp (Temp), and its own copies of the CLI's directories
// (HomeCopies, MapHomePath; AgentEnv and AgentPath, the supervisor's view
// of them) when it gets them. Wrap (an agent's, from a Launch) and
// WrapShadow (a Shadow: runner ask's, or a group's check) put a command
// in that sandbox: they find the sandbox program, make the directories it
// opens, and return the argv.
package confine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/sandbox"
)

// Temp is a sandboxed task's own temp folder where the system has
// no private /tmp to give it (macOS): under this user's temp directory,
// outside runner's hidden state.
func Temp(id string) string {
	return filepath.Join(os.TempDir(), "runner-tasks-"+strconv.Itoa(os.Getuid()), id)
}

// Place is where a sandboxed task lives, for SpecFor.
type Place struct {
	Dir       string // the task's folder
	GitCommon string // its repository's common git directory ("" when none)
	Home      string // the agent's HOME
	Getenv    func(string) string
	StateDir  string // runner's state directory
	Socket    string // the tmux server's socket
	Events    string // the task's events file ("" when none)
	HookDir   string // the task's hook files ("" when none)
	DoorDir   string // the task's door directory ("" when none)
}

// SpecFor is what a task's sandbox shows its agent (package sandbox):
// writable its folder, the repository's git directory and cliDirs (the
// CLI's own state directories, made already); read-only in them what
// says what git runs and the other tasks' worktrees; hidden runner's state
// directory and the user's runtime directory, covered the tmux socket; open
// the task's events file, hook files and door. A git directory's hooks and
// info folders are made when missing, so that the agent cannot plant
// them.
func SpecFor(pl Place, cliDirs []string) sandbox.Spec {
	spec := sandbox.Spec{Root: os.Geteuid() == 0}
	var paths []string
	if pl.Dir != "" {
		paths = append(paths, pl.Dir)
	}
	paths = append(paths, cliDirs...)
	var modules []string
	if pl.GitCommon != "" {
		paths = append(paths, pl.GitCommon)
		spec.Pinned = []string{pl.GitCommon}
		spec.ReadOnly = append(spec.ReadOnly, GitReadOnly(pl.GitCommon, true)...)
		// a submodule's git directory is written (its commits) but for
		// what says what git runs in it; one inside another's is read-only
		// whole (under the read-only modules folder)
		modules = ModuleGitDirs(pl.GitCommon)
	}
	// A worktree's .git file names its git directory: the agent must not
	// point it (and runner's git) elsewhere.
	if fi, err := os.Lstat(filepath.Join(pl.Dir, ".git")); pl.Dir != "" && err == nil && !fi.IsDir() {
		spec.ReadOnly = append(spec.ReadOnly, filepath.Join(pl.Dir, ".git"))
	}
	spec.Writable = sandbox.Writable(paths)
	if pl.GitCommon != "" && strings.HasPrefix(pl.Dir, pl.GitCommon+"/") {
		// The task's own worktree, under the read-only worktree folder,
		// and its git directory (index, HEAD); what in them names git's
		// directories is bound read-only after them (a bind made later
		// hides what was bound inside it before).
		spec.Open = append(spec.Open, pl.Dir)
		if gd := WorktreeGitDir(pl.Dir); gd != "" && sandbox.Within(gd, filepath.Join(pl.GitCommon, "worktrees")) && gd != filepath.Join(pl.GitCommon, "worktrees") {
			spec.Open = append(spec.Open, gd)
			spec.OpenRO = append(spec.OpenRO, GitReadOnly(gd, false)...)
		}
		spec.OpenRO = append(spec.OpenRO, filepath.Join(pl.Dir, ".git"))
	}
	for _, m := range modules {
		spec.Open = append(spec.Open, m)
		spec.OpenRO = append(spec.OpenRO, GitReadOnly(m, true)...)
	}
	var hidden []string
	if pl.StateDir != "" {
		hidden = append(hidden, pl.StateDir)
	}
	uid := strconv.Itoa(os.Getuid())
	if pl.Getenv != nil {
		if d := pl.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
			hidden = append(hidden, filepath.Clean(d))
		}
		// runner's config file and agent files (what runner runs)
		if path, _ := config.Path(pl.Getenv); path != "" {
			spec.ReadOnly = append(spec.ReadOnly, path, config.AgentsDir(pl.Getenv))
		}
	}
	hidden = append(hidden, "/run/user/"+uid)
	for _, h := range sandbox.Exists(hidden) {
		if !slices.Contains(spec.Hidden, h) {
			spec.Hidden = append(spec.Hidden, h)
		}
	}
	if pl.Socket != "" && !sandbox.Covered(pl.Socket, spec) {
		if _, err := os.Lstat(pl.Socket); err == nil {
			spec.Masked = append(spec.Masked, pl.Socket)
		}
	}
	if pl.Events != "" {
		spec.Open = append(spec.Open, pl.Events)
	}
	for _, d := range []string{pl.HookDir, pl.DoorDir} {
		if d != "" {
			spec.OpenRO = append(spec.OpenRO, d)
		}
	}
	if pl.DoorDir != "" {
		spec.Sockets = append(spec.Sockets, filepath.Join(pl.DoorDir, door.SocketName))
	}
	return spec
}

// GitReadOnly returns what of git directory gd git reads to know what to
// run, or where its repository is (gitrepository-layout(5)): config,
// config.worktree, commondir, hooks/, info/ (attributes, exclude,
// sparse-checkout), modules/ (the submodules' git directories), worktrees/
// and runner's worktree folder, and the old remotes/ and branches/; a
// linked worktree's gitdir too (common false: gd is a worktree's own
// directory, without the folders the common one holds). What is missing is
// made first, empty, so that the agent cannot create it in the writable
// git directory: the folders; config.worktree as an empty file (git reads
// it only where extensions.worktreeConfig is on, and then as empty); a
// main git directory's commondir as "." (itself: git reads one there too,
// and an empty one is an error). They are bound read-only over the git
// directory's writable bind.
func GitReadOnly(gd string, common bool) []string {
	dirs, files := gitsnap.ControlFiles(common)
	var out []string
	for _, d := range dirs {
		p := filepath.Join(gd, d)
		_ = os.Mkdir(p, 0o755)
		out = append(out, p)
	}
	for _, f := range files {
		p := filepath.Join(gd, f)
		out = append(out, p)
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		switch f {
		case "config.worktree":
			_ = os.WriteFile(p, nil, 0o644)
		case "commondir":
			if common {
				_ = os.WriteFile(p, []byte(".\n"), 0o644)
			}
		}
	}
	return out
}

// ModuleGitDirs returns the git directories of the submodules in common's
// modules/ folder (a name may have slashes: modules/a/b): each folder
// there that holds a HEAD, not those inside one (a submodule's own
// submodules stay read-only whole).
func ModuleGitDirs(common string) []string {
	var out []string
	root := filepath.Join(common, "modules")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == root {
			return nil
		}
		if fi, err := os.Lstat(filepath.Join(p, "HEAD")); err == nil && !fi.IsDir() {
			out = append(out, p)
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// WorktreeGitDir is the git directory a worktree's .git file names ("" when
// it names none).
func WorktreeGitDir(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil || len(b) > 4096 {
		return ""
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || !filepath.IsAbs(gd) {
		return ""
	}
	return filepath.Clean(gd)
}

// Sandbox homes (config sandbox_home = "task", dispatch --sandbox-home
// task): a sandboxed agent's CLI directories (the profile's sandbox_paths:
// ~/.claude, ~/.codex, …) are copied for the task into the state
// directory (homes/ID/) and bound over the real ones inside its sandbox,
// so that what the agent writes there — a hook planted in
// ~/.claude/settings.json, a Codex notify — never reaches the CLI the user
// runs later. The copy goes with the task's record (pruned, or gc). A
// follow-up of the task works on its copy.

// homeCopyMax bounds what a task's copy of its CLI's directories may
// hold: a CLI directory of gigabytes (years of sessions) is refused with
// what to do, not copied per task.
const homeCopyMax = 512 << 20

// HomeCopies copies each of paths (absolute; the CLI's directories and
// files) into root, at its place relative to home (or its whole path when
// it lies outside home), once: a copy that exists is the task's already
// (a follow-up). It returns agent path → copy.
func HomeCopies(root, home string, paths []string) (map[string]string, error) {
	copies := map[string]string{}
	var total int64
	for _, p := range paths {
		rel, err := filepath.Rel(home, p)
		if err != nil || home == "" || strings.HasPrefix(rel, "..") {
			rel = filepath.Join("abs", p)
		}
		dst := filepath.Join(root, "home", rel)
		copies[p] = dst
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		n, err := copyTree(p, dst, homeCopyMax-total)
		total += n
		if errors.Is(err, errTooBig) {
			return nil, fault.Usagef("--sandbox-home task: %s holds more than %d MiB to copy for the task (use the shared home, or move old sessions out of it)", p, homeCopyMax>>20)
		}
		if err != nil {
			return nil, fmt.Errorf("sandbox home: copy %s: %w", p, err)
		}
	}
	return copies, nil
}

var errTooBig = errors.New("too big to copy")

// copyTree copies src to dst: directories, regular files (mode kept),
// links as links (not followed); FIFOs, sockets and devices are left
// out. A missing src makes an empty directory when src names one in the
// profile's way ("~/.claude/" was made by Prepare: it exists). It returns
// the bytes copied, and errTooBig past limit.
func copyTree(src, dst string, limit int64) (int64, error) {
	var n int64
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == src {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			if n += info.Size(); n > limit {
				return errTooBig
			}
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil // a FIFO, socket or device: not the CLI's state
	})
	return n, err
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// MapHomePath returns the path that p, as the agent of a task with home
// copies (agent path → copy) sees it, has here: a transcript its hook
// names under ~/.claude lies in the task's copy.
func MapHomePath(copies map[string]string, p string) string {
	best := ""
	for from := range copies {
		if (p == from || strings.HasPrefix(p, from+"/")) && len(from) > len(best) {
			best = from
		}
	}
	if best == "" {
		return p
	}
	return copies[best] + strings.TrimPrefix(p, best)
}

// AgentEnv is how a supervisor looks up the agent's environment (HOME,
// CODEX_HOME) to find its CLI's files: this process's, but for a task with
// its own copies of the CLI's directories (copies: agent path → copy;
// sandbox_home "task"), where HOME is the copies' home and every path is
// in the copies.
func AgentEnv(copies map[string]string, home string) func(string) string {
	if len(copies) == 0 {
		return os.Getenv
	}
	return func(k string) string {
		if k == "HOME" {
			return home
		}
		v := os.Getenv(k)
		if filepath.IsAbs(v) {
			return MapHomePath(copies, v)
		}
		return v
	}
}

// AgentPath maps the paths an agent's hook names into the task's copies
// of its CLI's directories (nil: none).
func AgentPath(copies map[string]string) func(string) string {
	if len(copies) == 0 {
		return nil
	}
	return func(p string) string { return MapHomePath(copies, p) }
}
