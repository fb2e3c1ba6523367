package gitsnap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/runner-cli/runner/internal/textutil"
)

// runsDrivers reports whether cmd is a git command of ours that may run a
// filter (add, status, checkout and the like read and write work-tree
// files), a textconv or external diff (diff), or a merge driver (merge,
// merge-tree). A switch, not a package-level map built in every process's
// init.
func runsDrivers(cmd string) bool {
	switch cmd {
	case "add", "status", "diff", "merge", "merge-tree", "commit",
		"checkout", "read-tree", "worktree", "stash", "restore", "reset",
		"cherry-pick", "apply", "update-index":
		return true
	}
	return false
}

// driverKey matches the keys of the config that name a program to run
// per driver: a filter's clean, smudge and process, a diff driver's
// textconv and command, a merge driver's driver.
var driverKey = textutil.LazyRegexp(`^(filter|diff|merge)\.(.+)\.(clean|smudge|process|textconv|command|driver)$`)

// driverCache keeps each repository's overrides by its git directory; a
// repository whose config changes is asked again (see repo.drivers).
var driverCache sync.Map // gitDir → driverEntry

type driverEntry struct {
	stamp string
	cfg   []string
}

// drivers returns the -c options that turn off every filter, diff and
// merge driver that the repository's config (or a config it includes)
// defines, for every command here (git reads attributes in more places
// than one would think) and, on a host, for a command that may run one: the agent writes the tree's
// .gitattributes and, unsandboxed, .git/config, and runner's git must
// run nothing of theirs. A driver set to "" is no driver: git then reads
// the file as it is. The list is read once per repository and config
// (git config --get-regexp: it reads, it runs nothing).
func (r *repo) drivers(ctx context.Context, cmd string) []string {
	if r.via != nil && !runsDrivers(cmd) {
		return nil // a host's: only where a driver may run (each look is a round trip)
	}
	if r.driversRead {
		return r.driverCfg // one look per operation
	}
	defer func() { r.driversRead = true }()
	stamp := ""
	if r.via == nil {
		if noDrivers(r.gitDir) {
			return nil // no config git reads names a driver: no git call
		}
		stamp = configStamp(r.gitDir)
	}
	if e, ok := driverCache.Load(r.gitDir); ok && e.(driverEntry).stamp == stamp && stamp != "" {
		r.driverCfg = e.(driverEntry).cfg
		return r.driverCfg
	}
	out, err := run(ctx, call{via: r.via, dir: r.top, args: []string{"config", "--name-only", "--get-regexp", `^(filter|diff|merge)\.`}})
	var cfg []string
	if err == nil {
		cfg = DriverOverrides(string(out))
	}
	// An error is "no key matches" (exit 1) or a config git cannot read,
	// which then fails the command itself.
	driverCache.Store(r.gitDir, driverEntry{stamp: stamp, cfg: cfg})
	r.driverCfg = cfg
	return cfg
}

// DriverOverrides turns git config's key names (one a line) into the -c
// options that empty every program-naming key among them.
func DriverOverrides(names string) []string {
	var cfg []string
	seen := map[string]bool{}
	for _, k := range strings.Split(names, "\n") {
		k = strings.TrimSpace(k)
		m := driverKey.Re().FindStringSubmatch(k)
		if m == nil || seen[k] {
			continue
		}
		seen[k] = true
		cfg = append(cfg, "-c", k+"=")
		if m[1] == "filter" && !seen[m[1]+"."+m[2]+".required"] {
			seen[m[1]+"."+m[2]+".required"] = true
			cfg = append(cfg, "-c", m[1]+"."+m[2]+".required=false")
		}
	}
	return cfg
}

// configStamp is the size and time of each config file of the repository
// at gitDir (its own, a worktree's, the common one), "" when none can be
// read: a changed stamp asks git again.
func configStamp(gitDir string) string {
	files := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree"), filepath.Join(gitDir, "commondir")}
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil && len(b) < 4096 {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		files = append(files, filepath.Join(common, "config"), filepath.Join(common, "config.worktree"))
	}
	var sb strings.Builder
	found := false
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			sb.WriteString("-;")
			continue
		}
		found = true
		fmt.Fprintf(&sb, "%d:%d:%d;", fi.Size(), fi.ModTime().UnixNano(), fi.Sys().(*syscall.Stat_t).Ino)
	}
	if !found {
		return ""
	}
	return sb.String()
}

// noDrivers reports, without running git, that no config file git reads
// for the repository at gitDir (its own, a worktree's, the common one,
// the user's and the system's) can define a filter, diff or merge driver
// or include another file: none holds those words, and no config comes
// from the environment. Any doubt (a file that cannot be read, a config
// from the environment) says false, and git is asked.
func noDrivers(gitDir string) bool {
	if os.Getenv("GIT_CONFIG_COUNT") != "" || os.Getenv("GIT_CONFIG_PARAMETERS") != "" {
		return false
	}
	files := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree"), "/etc/gitconfig"}
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil && len(b) < 4096 {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		files = append(files, filepath.Join(common, "config"), filepath.Join(common, "config.worktree"))
	}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else if home := os.Getenv("HOME"); home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" {
			xdg = filepath.Join(home, ".config")
		}
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if s := os.Getenv("GIT_CONFIG_SYSTEM"); s != "" {
		files = append(files, s)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) || f == "/dev/null" {
			continue
		}
		if err != nil || len(b) > 1<<20 {
			return false
		}
		low := bytes.ToLower(b)
		for _, w := range [][]byte{[]byte("filter"), []byte("diff"), []byte("merge"), []byte("include")} {
			if bytes.Contains(low, w) {
				return false
			}
		}
	}
	return true
}
