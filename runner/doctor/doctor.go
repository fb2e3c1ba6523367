// Package doctor checks what runner needs on this machine and says what
// to do about each lack: tmux and its server, git, the state directory,
// the config file and agent files, each agent CLI (installed, its version
// against the profile's verified one, the Node it needs), the sandbox
// (bwrap, or sandbox-exec on macOS) and inotify's limit. Each check is a
// Check (ok, warn or fail, a detail and a fix); Run makes them and changes
// nothing, and `runner doctor` prints them and exits non-zero on a
// failure. CachedVersion (a CLI's version, remembered in the user's cache
// directory) serves dispatch's --permissions too. PushChecks adds the
// health of the config's push targets; WriteChecks and WriteAgents write
// checks and agents for people.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/sandbox"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/tmuxctl"
)

// CheckStatus is the outcome of one doctor check.
type CheckStatus string

// Check outcomes. Only CheckFail makes `runner doctor` exit 1.
const (
	CheckOK   CheckStatus = "ok"
	CheckWarn CheckStatus = "warn"
	CheckFail CheckStatus = "fail"
)

// Check is one line of `runner doctor`: what was checked, the outcome, what
// was found and, when not ok, what to do about it.
type Check struct {
	Name   string      `json:"name"`
	Status CheckStatus `json:"status"`
	Detail string      `json:"detail"`
	Fix    string      `json:"fix,omitempty"`
}

// Options are the inputs of Doctor.
type Options struct {
	// Getenv reads the environment (config path, state dir).
	Getenv func(string) string
	// Socket is the runner's tmux server, already resolved from --socket,
	// $RUNNER_TMUX_SOCKET or the default.
	Socket string
	// Self is the runner's own executable (the sim profile's binary).
	Self string
	// AgentVersions runs each installed agent CLI's version command.
	AgentVersions bool
	// NodeVersion runs `node --version` for the node check of the agent
	// CLIs node runs (once per node); nil runs it. Tests replace it.
	NodeVersion func(ctx context.Context, node string) (string, error)
}

// maxStateEntries bounds the permission walk of the state directory.
const maxStateEntries = 10000

// Run checks what runner needs (the config file, tmux and its version,
// the runner's tmux server, git, bwrap for sandboxes, the state directory and its permissions,
// the inotify instances left, the agent CLIs and the node that runs those
// that are Node programs) and returns one Check per finding, in a stable order. It
// changes nothing: a missing state directory is checked for being
// creatable, not created.
func Run(ctx context.Context, opts Options) []Check {
	var out []Check
	cfg, path, err := config.Load(opts.Getenv)
	out = append(out, configCheck(opts.Getenv, path, err))
	if err != nil {
		cfg = config.DefaultConfig()
	}
	out = append(out, tmuxChecks(ctx, cfg, opts.Socket)...)
	out = append(out, gitCheck(ctx))
	out = append(out, sandboxCheck(ctx, cfg))
	out = append(out, stateDirCheck(opts.Getenv))
	if c, ok := systemInotifyCheck(); ok {
		out = append(out, c)
	}
	out = append(out, agentChecks(ctx, cfg, path, opts)...)
	return out
}

// Failed reports whether any check failed.
func Failed(checks []Check) bool {
	for _, c := range checks {
		if c.Status == CheckFail {
			return true
		}
	}
	return false
}

func configCheck(getenv func(string) string, path string, err error) Check {
	c := Check{Name: "config", Status: CheckOK}
	switch {
	case err != nil:
		c.Status, c.Detail = CheckFail, err.Error()
		c.Fix = "edit " + path + " (every key is optional; see docs/configuration.md)"
	case path == "":
		c.Detail = "no config file (none of RUNNER_CONFIG, XDG_CONFIG_HOME, HOME is set): built-in defaults"
	default:
		if _, statErr := os.Stat(path); statErr != nil {
			c.Detail = path + " does not exist: built-in defaults"
			if getenv("RUNNER_CONFIG") != "" {
				c.Status = CheckWarn
				c.Detail = "RUNNER_CONFIG names " + path + ", which does not exist: built-in defaults"
				c.Fix = "create the file or unset RUNNER_CONFIG"
			}
		} else {
			c.Detail = path
		}
	}
	return c
}

func tmuxChecks(ctx context.Context, cfg *config.Config, socket string) []Check {
	bin := cfg.TmuxBinary
	if bin == "" {
		bin = "tmux"
	}
	installFix := "install tmux " + tmuxctl.MinVersion + " or later (e.g. 'apt-get install tmux' or 'brew install tmux'), or set \"tmux_binary\" in the config"
	t := Check{Name: "tmux", Status: CheckOK}
	server := Check{Name: "tmux-server", Status: CheckOK}
	path, err := exec.LookPath(bin)
	if err != nil {
		t.Status, t.Detail, t.Fix = CheckFail, fmt.Sprintf("%s not found: %v", bin, err), installFix
		server.Status, server.Detail = CheckWarn, "not checked: tmux not found"
		return []Check{t, server}
	}
	client := tmuxctl.New(socket, tmuxctl.WithBinary(path))
	v, err := client.Version(ctx)
	switch {
	case err != nil:
		t.Status, t.Detail, t.Fix = CheckFail, fmt.Sprintf("%s: %v", path, err), installFix
	case tmuxctl.CheckVersion(v) != nil:
		t.Status, t.Detail, t.Fix = CheckFail, fmt.Sprintf("%s: %v", path, tmuxctl.CheckVersion(v)), installFix
	default:
		t.Detail = fmt.Sprintf("%s %s", path, v)
	}

	where := fmt.Sprintf("socket %q (tmux %s)", socket, strings.Join(tmuxctl.SocketArgs(socket), " "))
	panes, err := client.ListPanes(ctx)
	if err != nil {
		server.Status = CheckFail
		server.Detail = fmt.Sprintf("%s: %v", where, err)
		server.Fix = "check the socket's owner and permissions, or restart the server: tmux " + strings.Join(tmuxctl.SocketArgs(socket), " ") + " kill-server (this ends its tasks)"
		return []Check{t, server}
	}
	if len(panes) == 0 {
		server.Detail = where + ": not running (started by the first dispatch)"
		return []Check{t, server}
	}
	sessions := map[string]bool{}
	dead := 0
	for _, p := range panes {
		sessions[p.Session] = true
		if p.Dead {
			dead++
		}
	}
	server.Detail = fmt.Sprintf("%s: running, %s, %s (%d dead)", where,
		plural(len(sessions), "session"), plural(len(panes), "pane"), dead)
	return []Check{t, server}
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// sandboxCheck says whether this system's sandbox (bwrap, or macOS's
// sandbox-exec) can make a sandbox here (dispatch
// --sandbox): a failure when the config asks for sandboxes, else a
// warning.
func sandboxCheck(ctx context.Context, cfg *config.Config) Check {
	path, err := sandbox.CheckLocal(ctx)
	if err == nil {
		return Check{Name: "sandbox", Status: CheckOK, Detail: filepath.Base(path) + " works (" + path + "): dispatch --sandbox is available"}
	}
	st := CheckWarn
	for _, on := range cfg.Sandbox {
		if on {
			st = CheckFail // the config's sandboxed projects cannot start
		}
	}
	return Check{Name: "sandbox", Status: st, Detail: err.Error(), Fix: sandbox.LocalInstallHint}
}

func gitCheck(ctx context.Context) Check {
	path, err := exec.LookPath("git")
	if err != nil {
		return Check{Name: "git", Status: CheckWarn, Detail: "git not found in PATH: tasks run without snapshots",
			Fix: "install git (e.g. 'apt-get install git')"}
	}
	v, err := gitsnap.Version(ctx)
	if err != nil {
		return Check{Name: "git", Status: CheckWarn, Detail: path + ": " + err.Error(), Fix: "reinstall git"}
	}
	return Check{Name: "git", Status: CheckOK, Detail: v + " (" + path + ")"}
}

// access modes for syscall.Access.
const (
	accessW = 0x2
	accessX = 0x1
)

func stateDirCheck(getenv func(string) string) Check {
	c := Check{Name: "state-dir", Status: CheckOK}
	dir, err := config.StateDir(getenv)
	if err != nil {
		c.Status, c.Detail, c.Fix = CheckFail, err.Error(), "set RUNNER_STATE_DIR or HOME"
		return c
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// The nearest existing ancestor must let us create the rest.
		parent := filepath.Dir(dir)
		for {
			if _, err := os.Stat(parent); err == nil || parent == filepath.Dir(parent) {
				break
			}
			parent = filepath.Dir(parent)
		}
		if err := syscall.Access(parent, accessW|accessX); err != nil {
			c.Status = CheckFail
			c.Detail = fmt.Sprintf("%s does not exist and cannot be created: %s is not writable (%v)", dir, parent, err)
			c.Fix = "set RUNNER_STATE_DIR to a writable directory"
			return c
		}
		c.Detail = dir + " does not exist yet; it will be created with mode 0700"
		return c
	}
	if err != nil {
		c.Status, c.Detail, c.Fix = CheckFail, err.Error(), "set RUNNER_STATE_DIR to a directory you own"
		return c
	}
	if !fi.IsDir() {
		c.Status, c.Detail, c.Fix = CheckFail, dir+" is not a directory", "move it aside or set RUNNER_STATE_DIR"
		return c
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		c.Status = CheckFail
		c.Detail = fmt.Sprintf("%s belongs to uid %d, not to you (uid %d)", dir, st.Uid, os.Geteuid())
		c.Fix = fmt.Sprintf("chown -R %d %s, or set RUNNER_STATE_DIR", os.Geteuid(), dir)
		return c
	}
	if err := syscall.Access(dir, accessW|accessX); err != nil {
		c.Status, c.Detail, c.Fix = CheckFail, fmt.Sprintf("%s is not writable (%v)", dir, err), "chmod 700 "+dir
		return c
	}
	loose, n := looseEntries(dir)
	if len(loose) > 0 {
		sort.Strings(loose)
		shown := loose[:min(len(loose), 3)]
		more := ""
		if len(loose) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(loose)-len(shown))
		}
		c.Status = CheckWarn
		c.Detail = fmt.Sprintf("%s: readable by others (want dirs 0700, files 0600): %s%s", dir, strings.Join(shown, ", "), more)
		c.Fix = "chmod -R go-rwx " + dir
		return c
	}
	c.Detail = fmt.Sprintf("%s: not readable by others (%d entries checked)", dir, n)
	if n >= maxStateEntries {
		c.Detail = fmt.Sprintf("%s: not readable by others (the first %d entries checked)", dir, n)
	}
	return c
}

// looseEntries walks the first maxStateEntries entries of dir and returns
// those others may access ("REL MODE"), and how many it looked at.
func looseEntries(dir string) (loose []string, n int) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || n >= maxStateEntries {
			return filepath.SkipDir
		}
		n++
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if info.Mode().Perm()&0o077 != 0 {
			rel, _ := filepath.Rel(dir, p)
			loose = append(loose, fmt.Sprintf("%s %04o", rel, info.Mode().Perm()))
		}
		return nil
	})
	return loose, n
}

func agentChecks(ctx context.Context, cfg *config.Config, cfgPath string, opts Options) []Check {
	ps, err := cfg.Profiles()
	if err != nil {
		// Only for a config config.Load refused; the config check says why.
		ps = profile.Builtins()
	}
	var out []Check
	var missing []string
	defaultOK := false
	nodes := newNodeVersions(opts.NodeVersion)
	for _, st := range CheckAgents(ctx, ps, opts.Self, opts.AgentVersions) {
		if !st.Installed {
			if st.Name != cfg.DefaultAgent {
				missing = append(missing, st.Name)
			}
			continue
		}
		c := Check{Name: "agent:" + st.Name, Status: CheckOK, Detail: st.Path}
		if st.Version != "" {
			c.Detail += " " + st.Version
		}
		if p, err := profile.FindProfile(ps, st.Name); err == nil && p.VerifiedVersion != "" {
			if cmp, ok := profile.CompareVersions(st.Version, p.VerifiedVersion); ok && cmp > 0 {
				c.Status = CheckWarn
				c.Detail += fmt.Sprintf(": newer than %s, the version its profile was verified on (its screens or dialogs may have changed)", p.VerifiedVersion)
				c.Fix = "run scripts/test-newest-agents.sh, or pin " + p.VerifiedVersion + " (npm install -g …@" + p.VerifiedVersion + ")"
			}
		}
		if st.VersionError != "" {
			c.Status = CheckWarn
			c.Detail += ": version unknown: " + st.VersionError
			c.Fix = "check that '" + st.Path + "' runs, or reinstall it"
		}
		if st.Name == cfg.DefaultAgent {
			defaultOK = true
		}
		out = append(out, c)
		if nc, ok := nodeCheck(ctx, st.Name, st.Path, nodes); ok {
			out = append(out, nc)
		}
		if pc, ok := platformCheck(st.Name, st.Path); ok {
			out = append(out, pc)
		}
	}
	if len(missing) > 0 {
		out = append(out, Check{Name: "agents", Status: CheckOK,
			Detail: "not installed (optional): " + strings.Join(missing, ", ")})
	}
	d := Check{Name: "default-agent", Status: CheckOK, Detail: fmt.Sprintf("%q is installed", cfg.DefaultAgent)}
	if !defaultOK {
		where := "the config file"
		if cfgPath != "" {
			where = cfgPath
		}
		d.Status = CheckWarn
		d.Detail = fmt.Sprintf("%q is not installed: a dispatch without --agent will fail", cfg.DefaultAgent)
		d.Fix = fmt.Sprintf("install it, or set \"default_agent\" in %s", where)
		if p, err := profile.FindProfile(ps, cfg.DefaultAgent); err == nil && p.Description != "" {
			d.Fix = fmt.Sprintf("install %s, or set \"default_agent\" in %s", p.Description, where)
		}
	}
	return append(out, d)
}
