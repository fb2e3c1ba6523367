// Where a task works: a project's name, its directory and the host it is
// on, resolved from what a user types (a name, a path, host:NAME:/dir),
// and the tmux session of a project.

package projects

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/runner-cli/runner/runner/hosts"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// isPathArg says whether a PROJECT argument is a path rather than a name.
func isPathArg(s string) bool {
	return s == "." || s == ".." || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") ||
		strings.HasPrefix(s, "../") || strings.HasPrefix(s, "~") || strings.Contains(s, "/")
}

// Place is where a task works: its project's name ("" for a bare
// path), its absolute directory, and the host it is on ("" for this
// machine).
type Place struct {
	Project, Dir, Host string
	// Pool is the pool of hosts (--host any, label:L) the task waits to
	// be placed on; Host is then empty.
	Pool string
}

// Resolve returns where a dispatch to arg works. arg is a
// registered name, a path of this machine, or a directory on a host:
// "host:HOST:/dir", or an absolute path with host HOST (dispatch --host).
// A path that is the directory of a registered project gives that
// project's name (a project's identity is its directory). A directory on
// a host is checked there by the caller (it needs the connection).
func Resolve(st *state.State, arg, host string) (Place, error) {
	if arg == "" {
		return Place{}, fault.Usagef("no project: give a registered name (see 'runner project list') or a directory such as .")
	}
	if h, dir, ok := hosts.Path(arg); ok {
		if host != "" && host != h {
			return Place{}, fault.Usagef("project %q is on host %s, not on --host %s", arg, h, host)
		}
		arg, host = dir, h
	}
	if hosts.IsPool(host) {
		if !strings.HasPrefix(arg, "/") {
			return Place{}, fault.Usagef("--host %s: give an absolute path, the same on every host of the pool (e.g. /srv/api), not %q", host, arg)
		}
		return Place{Dir: path.Clean(arg), Pool: host}, nil
	}
	if host != "" {
		return resolveOnHost(st, arg, host)
	}
	if isPathArg(arg) {
		abs, err := projectPath(arg)
		if err != nil {
			return Place{}, fault.Usagef("project path %q: %v", arg, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return Place{}, fault.Usagef("project path %q: directory %s does not exist", arg, abs)
		}
		if name := registeredName(st, abs); name != "" {
			return Place{Project: name, Dir: st.Projects[name].Dir}, nil
		}
		return Place{Dir: abs}, nil
	}
	p, ok := st.Projects[arg]
	if !ok {
		return Place{}, fault.Usagef("project %q is not registered (add it with 'runner project add %s DIR', or give a path such as ./%s)", arg, arg, arg)
	}
	if p.Host != "" {
		return Place{Project: arg, Dir: p.Dir, Host: p.Host}, nil
	}
	if fi, err := os.Stat(p.Dir); err != nil || !fi.IsDir() {
		return Place{}, fault.Usagef("project %q: directory %s does not exist (re-add it with 'runner project rm %s' and 'runner project add %s DIR')", arg, p.Dir, arg, arg)
	}
	return Place{Project: arg, Dir: p.Dir}, nil
}

// resolveOnHost is Resolve for a project or an absolute path on
// host.
func resolveOnHost(st *state.State, arg, host string) (Place, error) {
	if !strings.HasPrefix(arg, "/") {
		p, ok := st.Projects[arg]
		switch {
		case !ok:
			return Place{}, fault.Usagef("project %q is not registered; on host %s give an absolute path (--host %s /srv/dir)", arg, host, host)
		case p.Host != host:
			return Place{}, fault.Usagef("project %q is at %s, not on host %s", arg, hosts.Location(*p), host)
		}
		return Place{Project: arg, Dir: p.Dir, Host: host}, nil
	}
	dir := path.Clean(arg)
	for _, p := range st.ProjectList() {
		if p.Host == host && p.Dir == dir {
			return Place{Project: p.Name, Dir: dir, Host: host}, nil
		}
	}
	return Place{Dir: dir, Host: host}, nil
}

// SessionName is the tmux session of a project: its name, or for a path
// "dir-<base>-<hash>" (a 32-bit hash of the directory, so two directories
// with the same base name get two sessions). Dots are replaced (tmux reserves them in targets).
func SessionName(project, dir string) string {
	name := project
	if name == "" {
		var h uint32 = 2166136261
		for i := 0; i < len(dir); i++ {
			h = (h ^ uint32(dir[i])) * 16777619
		}
		base := regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(filepath.Base(dir), "_")
		if len(base) > 40 {
			base = base[:40]
		}
		name = fmt.Sprintf("dir-%s-%08x", base, h)
	}
	return strings.ReplaceAll(name, ".", "_")
}

// LockKey names a project's lock: its name, or its session name for a
// path.
func LockKey(project, dir, host string) string {
	switch {
	case project != "":
		return project
	case host != "":
		return host + "-" + SessionName("", dir)
	}
	return SessionName("", dir)
}
