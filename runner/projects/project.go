// Package projects is the registry of projects (add, list, remove, prune)
// and the place a task works: a name, a path or host:NAME:/dir resolved to a
// directory and a host, and the tmux session of a project. It needs the
// state store, and runner/hosts for a directory on a host (its name
// parsed, the directory checked there over ssh).
package projects

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/hosts"

	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/state"
)

// ValidateName returns a usage error unless name is a valid name
// (state.ValidName: [a-z0-9][a-z0-9._-]{0,63}).
func ValidateName(name string) error {
	if !state.ValidName(name) {
		return fault.Usagef("invalid project name %q: use 1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a letter or digit (e.g. %q)",
			name, state.SuggestName(name))
	}
	return nil
}

// Add registers directory dir under name. The name must be valid
// (ValidateName), dir must exist and be a directory, and the name must
// be free; each of these is a usage error (exit 2) and writes nothing. dir is
// stored absolute and cleaned. A dir written "host:HOST:/path" is a
// directory on a registered host (runner host add), checked there over ssh:
// an unknown host or a missing directory is a usage error, an unreachable
// host an error wrapping hosts.ErrUnreachable.
func Add(ctx context.Context, s *state.Store, name, dir string) (state.Project, error) {
	if err := ValidateName(name); err != nil {
		return state.Project{}, err
	}
	if dir == "" {
		return state.Project{}, fault.Usagef("project %q: no directory given (use 'runner project add %s DIR')", name, name)
	}
	host, dir, remote := hosts.Path(dir)
	var abs string
	var err error
	if remote {
		c, err := hosts.NewPool(s).Conn(ctx, host)
		if err != nil {
			return state.Project{}, fmt.Errorf("project %q: %w", name, err)
		}
		abs = path.Clean(dir)
		if err := c.CheckDir(ctx, fmt.Sprintf("project %q", name), abs); err != nil {
			return state.Project{}, err
		}
	} else if abs, err = localProjectDir(name, dir); err != nil {
		return state.Project{}, err
	}
	p := state.Project{Name: name, Dir: abs, Host: host, Added: clock.Now().UTC()}
	err = s.Update(ctx, func(st *state.State) error {
		if old, ok := st.Projects[name]; ok {
			return fault.Usagef("project %q already exists (%s); remove it first with 'runner project rm %s'", name, hosts.Location(*old), name)
		}
		st.Projects[name] = &p
		return nil
	})
	if err != nil {
		return state.Project{}, err
	}
	if err := s.Journal(ctx, state.Event{Kind: state.EventProjectAdded, Project: name, ProjectRecord: &p}); err != nil {
		return p, fmt.Errorf("project %q was added, but the journal was not written: %w", name, err)
	}
	return p, nil
}

// localProjectDir is dir made absolute, once it is known to be a
// directory of this machine.
func localProjectDir(name, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("project %q: resolve %s: %w", name, dir, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fault.Usagef("project %q: directory %s does not exist (create it first, or give an existing directory)", name, abs)
	case err != nil:
		return "", fault.Usagef("project %q: cannot use directory %s: %v", name, abs, err)
	case !fi.IsDir():
		return "", fault.Usagef("project %q: %s is not a directory (give the project's directory)", name, abs)
	}
	return abs, nil
}

// List returns the registered projects sorted by name.
func List(ctx context.Context, s *state.Store) ([]state.Project, error) {
	st, err := s.Read(ctx)
	if err != nil {
		return nil, err
	}
	return st.ProjectList(), nil
}

// Remove unregisters a project. An unknown name, or a project that
// still has active tasks, is a usage error and writes nothing. The project's
// directory is not touched.
func Remove(ctx context.Context, s *state.Store, name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	err := s.Update(ctx, func(st *state.State) error {
		if _, ok := st.Projects[name]; !ok {
			return fault.Usagef("no project named %q (see 'runner project list')", name)
		}
		ref := Ref{Name: name, Dir: st.Projects[name].Dir}
		var active []string
		for _, t := range st.Tasks {
			if ref.Has(t) && t.Status.IsActive() {
				active = append(active, t.ID)
			}
		}
		if len(active) > 0 {
			sort.Strings(active)
			return fault.Usagef("project %q has %d active task(s) (%s); wait for them or cancel them first",
				name, len(active), strings.Join(active, ", "))
		}
		delete(st.Projects, name)
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.Journal(ctx, state.Event{Kind: state.EventProjectRemoved, Project: name}); err != nil {
		return fmt.Errorf("project %q was removed, but the journal was not written: %w", name, err)
	}
	return nil
}

// Prune removes the finished tasks that ended more than olderThan ago,
// records it in the journal and returns their ids.
func Prune(ctx context.Context, s *state.Store, olderThan time.Duration) ([]string, error) {
	if olderThan < 0 {
		return nil, fault.Usagef("--older-than must not be negative (got %v)", olderThan)
	}
	removed, err := s.Prune(ctx, olderThan)
	if err != nil {
		return nil, err
	}
	if len(removed) > 0 {
		msg := fmt.Sprintf("pruned %d finished task(s) older than %v: %s", len(removed), olderThan, strings.Join(removed, " "))
		if err := s.Journal(ctx, state.Event{Kind: state.EventPrune, Message: msg}); err != nil {
			return removed, fmt.Errorf("tasks were pruned, but the journal was not written: %w", err)
		}
	}
	return removed, nil
}

// Ref identifies a project. A project's identity is its directory:
// two tasks are in the same project when they work in the same directory,
// whether they were dispatched by a registered name or by a path. Name is
// the registered name, when the directory has one.
type Ref struct {
	Name string
	Dir  string
}

// Has reports whether task t belongs to the project: it works in its
// directory or carries its name.
func (p Ref) Has(t *state.Task) bool {
	return (p.Dir != "" && t.Dir == p.Dir) || (p.Name != "" && t.Project == p.Name)
}

// String is the project's name, or its directory when it has none.
func (p Ref) String() string {
	if p.Name != "" {
		return p.Name
	}
	return p.Dir
}

// Label names a task's project for people and agents: its
// registered name, or its directory.
func Label(t *state.Task) string {
	if t.Project != "" {
		return t.Project
	}
	return t.Dir
}

// Select resolves a PROJECT argument of ps --project, wait --all
// --project and @project: a registered name, a name that tasks carry, or a
// directory given as a path (./a, /x/b, ~/src: see isPathArg). A path that
// is a registered project's directory selects that project. Unknown is a
// usage error.
func Select(st *state.State, arg string) (Ref, error) {
	if arg == "" {
		return Ref{}, fault.Usagef("no project given: use a registered name (see 'runner project list') or a directory such as .")
	}
	if isPathArg(arg) {
		dir, err := projectPath(arg)
		if err != nil {
			return Ref{}, fault.Usagef("project path %q: %v", arg, err)
		}
		if name := registeredName(st, dir); name != "" {
			return Ref{Name: name, Dir: st.Projects[name].Dir}, nil
		}
		for _, t := range st.Tasks {
			if t.Tmux.Host == "" && (t.Dir == dir || sameDir(t.Dir, dir)) {
				return Ref{Dir: t.Dir}, nil
			}
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return Ref{}, fault.Usagef("project path %q: directory %s does not exist and no task worked there", arg, dir)
		}
		return Ref{Dir: dir}, nil
	}
	if p, ok := st.Projects[arg]; ok {
		return Ref{Name: arg, Dir: p.Dir}, nil
	}
	for _, t := range st.Tasks {
		if t.Project == arg {
			return Ref{Name: arg}, nil
		}
	}
	return Ref{}, fault.Usagef("project %q is not registered and has no tasks (see 'runner project list', or give a directory such as ./%s)", arg, arg)
}

// projectPath makes a path argument absolute and clean; "~" and "~/…" are
// the home directory.
func projectPath(arg string) (string, error) {
	if arg == "~" || strings.HasPrefix(arg, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		arg = filepath.Join(home, strings.TrimPrefix(arg, "~"))
	}
	return filepath.Abs(arg)
}

// registeredName returns the name of the registered project whose
// directory is dir (also through symbolic links), or "".
func registeredName(st *state.State, dir string) string {
	for _, p := range st.ProjectList() {
		if p.Host == "" && p.Dir == dir {
			return p.Name
		}
	}
	for _, p := range st.ProjectList() {
		if p.Host == "" && sameDir(p.Dir, dir) {
			return p.Name
		}
	}
	return ""
}

// sameDir reports whether a and b are the same directory once symbolic
// links are resolved.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ea, err := filepath.EvalSymlinks(a)
	if err != nil {
		return false
	}
	eb, err := filepath.EvalSymlinks(b)
	return err == nil && ea == eb
}

// TaskEnv is the environment that names task t in its pane, here or on a
// host: its id, its project (Label), its level, its parent and its ports
// (RUNNER_PORT, the first of RUNNER_PORT_COUNT). The pane's other
// variables (where the state and the events go) are its site's.
func TaskEnv(t *state.Task) []string {
	kv := []string{
		"RUNNER_TASK_ID=" + t.ID,
		"RUNNER_PROJECT=" + Label(t),
		"RUNNER_LEVEL=" + strconv.Itoa(t.Level),
		"RUNNER_PARENT=" + t.Parent,
	}
	if !t.Ports.IsZero() {
		kv = append(kv, "RUNNER_PORT="+strconv.Itoa(t.Ports.First), "RUNNER_PORT_COUNT="+strconv.Itoa(t.Ports.Count))
	}
	return kv
}
