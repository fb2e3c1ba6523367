package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

// sandbox wraps argv, the agent's command with its hook's arguments,
// in a bubblewrap sandbox (package sandbox) and returns what the agent may
// write: the task's folder (its worktree, or the project), the repository's
// git directory (commits, a worktree's index) but for what says what git
// runs (config, hooks, info, the worktree's .git file) and the other
// tasks' worktrees, and the agent CLI's own state directories under HOME
// (the profile's sandbox_paths, made when missing) and the user's (config
// sandbox_paths). Runner's state directory, the user's runtime directory
// and the tmux socket are out of reach; the task's events file, its hook
// files and its door (package door) are its openings. penv is the pane's
// environment (HOME, XDG_*, CODEX_HOME … for the profile's paths). The
// dispatch checked that bwrap works (sandbox.Check); here it is only found
// (a bwrap gone since is an error).
func (s localSite) sandbox(ctx context.Context, t *state.Task, prof *profile.Profile, penv, argv []string, sb *settings.Sandbox) ([]string, []string, error) {
	env := s.env
	prog, err := exec.LookPath(sandbox.LocalProgram)
	if err != nil {
		return nil, nil, exit.Usagef("--sandbox: %s is not installed any more (%s)", sandbox.LocalProgram, sandbox.LocalInstallHint)
	}
	home := ""
	for _, kv := range penv {
		if v, ok := cutEnv(kv, "HOME"); ok {
			home = v
		}
	}
	common := ""
	if gctx, err := env.GitContext(ctx, t); err == nil {
		if c, err := gitsnap.CommonDir(gctx, t.Dir); err == nil {
			common = c
		}
	}
	var cliMarked, userMarked []string
	for _, p := range prof.SandboxPaths {
		if x := sandbox.Expand(p, home, penv); x != "" {
			cliMarked = append(cliMarked, x)
		}
	}
	for _, p := range sb.Paths {
		if x := sandbox.Expand(p, home, penv); x != "" {
			userMarked = append(userMarked, x)
		}
	}
	cliDirs, err := sandbox.Prepare(cliMarked)
	if err != nil {
		return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	made, err := sandbox.Prepare(userMarked)
	if err != nil {
		return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	var binds [][2]string
	if sb.Home == settings.SandboxHomeTask {
		// The CLI's directories, copied for the task and bound over the
		// real ones: nothing the agent writes there reaches the user's.
		copies, err := homeCopies(env.Store.TaskFile("home-dir", t.ID), home, cliDirs)
		if err != nil {
			return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
		for _, p := range cliDirs {
			binds = append(binds, [2]string{copies[p], p})
		}
		if err := env.Record().Update(ctx, t.ID, func(x *state.Task) { x.HomeCopies = copies }); err != nil {
			return nil, nil, err
		}
	} else {
		made = append(made, cliDirs...)
	}
	door := env.Store.TaskFile("door-dir", t.ID)
	if err := os.MkdirAll(door, 0o700); err != nil {
		return nil, nil, fmt.Errorf("task %s: its door: %w", t.ID, err)
	}
	spec := sandboxSpec(sandboxPlace{Dir: t.Dir, GitCommon: common, Home: home, Getenv: env.Env,
		StateDir: env.Store.Dir(), Socket: env.TC.SocketPath(),
		Events: env.Store.TaskFile("events", t.ID), HookDir: env.Store.TaskFile("hook-dir", t.ID), DoorDir: door}, made)
	// What the agent reads that /tmp holds would vanish under the private
	// /tmp: its program, runner (its hook), the PATH, HOME (a test's),
	// each as it really is (an npm bin/ entry is a link into lib/).
	read := []string{filepath.Dir(argv[0]), argv[0], filepath.Dir(env.Exe), env.Exe, home}
	for _, kv := range penv {
		if v, ok := cutEnv(kv, "PATH"); ok {
			read = append(read, filepath.SplitList(v)...)
		}
	}
	if p, err := exec.LookPath(argv[0]); err == nil {
		read = append(read, filepath.Dir(p), p)
	}
	spec.Readable = sandbox.Readable(read)
	spec.Binds = binds
	writable := spec.Writable
	for _, b := range binds {
		writable = append(writable, b[1]+" (the task's copy)")
	}
	wrapped, err := sandbox.WrapLocal(prog, spec, sandboxTemp(t.ID), argv)
	if err != nil {
		return nil, nil, exit.Usagef("--sandbox: %v", err)
	}
	return wrapped, writable, nil
}

// sandboxTemp is a sandboxed task's own temp folder where the system has
// no private /tmp to give it (macOS): under this user's temp directory,
// outside runner's hidden state.
func sandboxTemp(id string) string {
	return filepath.Join(os.TempDir(), "runner-tasks-"+strconv.Itoa(os.Getuid()), id)
}

// sandboxPlace is where a sandboxed task lives, for sandboxSpec.
type sandboxPlace struct {
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

// sandboxSpec is what a task's sandbox shows its agent (package sandbox):
// writable its folder, the repository's git directory and cliDirs (the
// CLI's own state directories, made already); read-only in them what
// says what git runs and the other tasks' worktrees; hidden runner's state
// directory and the user's runtime directory, covered the tmux socket; open
// the task's events file, hook files and door. A git directory's hooks and
// info folders are made when missing, so that the agent cannot plant
// them.
func sandboxSpec(pl sandboxPlace, cliDirs []string) sandbox.Spec {
	spec := sandbox.Spec{Root: os.Geteuid() == 0}
	var paths []string
	if pl.Dir != "" {
		paths = append(paths, pl.Dir)
	}
	paths = append(paths, cliDirs...)
	if pl.GitCommon != "" {
		paths = append(paths, pl.GitCommon)
		spec.Pinned = []string{pl.GitCommon}
		for _, d := range []string{"hooks", "info"} {
			_ = os.MkdirAll(filepath.Join(pl.GitCommon, d), 0o755)
		}
		spec.ReadOnly = append(spec.ReadOnly, filepath.Join(pl.GitCommon, "config"), filepath.Join(pl.GitCommon, "hooks"),
			filepath.Join(pl.GitCommon, "info"), filepath.Join(pl.GitCommon, "commondir"),
			filepath.Join(pl.GitCommon, gitsnap.WorktreeHomeName), filepath.Join(pl.GitCommon, "worktrees"))
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
		if gd := worktreeGitDir(pl.Dir); gd != "" {
			spec.Open = append(spec.Open, gd)
			spec.OpenRO = append(spec.OpenRO, filepath.Join(gd, "commondir"), filepath.Join(gd, "gitdir"), filepath.Join(gd, "config.worktree"))
		}
		spec.OpenRO = append(spec.OpenRO, filepath.Join(pl.Dir, ".git"))
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

// worktreeGitDir is the git directory a worktree's .git file names ("" when
// it names none).
func worktreeGitDir(dir string) string {
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

// cutEnv returns the value of kv if it is key's entry (KEY=VALUE).
func cutEnv(kv, key string) (string, bool) {
	if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
		return kv[len(key)+1:], true
	}
	return "", false
}

// ShadowSandbox wraps argv, the headless command of a shadow of task t
// (runner ask), in a sandbox: it reads what it likes, writes only the
// CLI's own state directories (the profile's sandbox_paths, which it
// needs), and sees nothing of runner's. A shadow of a sandboxed task runs
// so (its folder's agent files, hooks among them, are the agent's to
// write), and so does every shadow asked through a sandboxed task's door.
func ShadowSandbox(env *Env, t *state.Task, prof *profile.Profile, argv []string) ([]string, error) {
	prog, err := exec.LookPath(sandbox.LocalProgram)
	if err != nil {
		return nil, exit.Usagef("the shadow of sandboxed task %s runs sandboxed, and %s is not installed (%s)", t.ID, sandbox.LocalProgram, sandbox.LocalInstallHint)
	}
	environ := os.Environ
	if env.Environ != nil {
		environ = env.Environ
	}
	penv := environ()
	home := env.Env("HOME")
	var marked []string
	for _, p := range prof.SandboxPaths {
		if x := sandbox.Expand(p, home, penv); x != "" {
			marked = append(marked, x)
		}
	}
	made, err := sandbox.Prepare(marked)
	if err != nil {
		return nil, fmt.Errorf("shadow of %s: %w", t.ID, err)
	}
	var binds [][2]string
	if len(t.HomeCopies) > 0 {
		// The task's own copies of its CLI's directories (sandbox_home
		// "task"), not the user's.
		made = nil
		for p, c := range t.HomeCopies {
			binds = append(binds, [2]string{c, p})
		}
		slices.SortFunc(binds, func(a, b [2]string) int { return strings.Compare(a[1], b[1]) })
	}
	spec := sandboxSpec(sandboxPlace{Home: home, Getenv: env.Env, StateDir: env.Store.Dir(), Socket: env.TC.SocketPath()}, made)
	spec.Binds = binds
	read := []string{filepath.Dir(argv[0]), argv[0], home, t.Dir}
	read = append(read, filepath.SplitList(env.Env("PATH"))...)
	spec.Readable = sandbox.Readable(read)
	wrapped, err := sandbox.WrapLocal(prog, spec, sandboxTemp(t.ID), argv)
	if err != nil {
		return nil, exit.Usagef("the shadow of sandboxed task %s: %v", t.ID, err)
	}
	return wrapped, nil
}
