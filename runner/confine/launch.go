package confine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/sandbox"
)

// Launch is what the sandbox of a task's agent is made from (Wrap): where
// the task lives, what it runs and the paths it keeps.
type Launch struct {
	Place
	ID   string   // the task's id
	Exe  string   // runner's binary (the hook the agent runs)
	Env  []string // the pane's environment (for the paths' $VARS)
	Path string   // its PATH
	Argv []string // the agent's command with its hook's arguments
	// CLIPaths are the CLI's own state directories (the profile's
	// sandbox_paths), UserPaths the user's (config sandbox_paths).
	CLIPaths, UserPaths []string
	// CopiesDir, when set, is where the task's own copies of the CLI's
	// directories are made and bound over the real ones (sandbox_home
	// "task"); SaveCopies records them with the task.
	CopiesDir  string
	SaveCopies func(copies map[string]string) error
	// Verify starts runner first inside the sandbox (runner
	// sandbox-exec), to check that every writable bind is the place
	// checked now before it runs the agent: for a task whose folder an
	// agent can change (a child's, in its parent's), where a link swapped
	// in after the check would have bwrap bind another place.
	Verify bool
}

// Wrap returns l.Argv in a sandbox (package sandbox, its program found in
// PATH) and what the agent may write there: the task's folder, the
// repository's git directory but for what says what git runs, the CLI's
// own state directories (made when missing) and the user's; runner's
// state, the runtime directory and the tmux socket out of reach; the
// events file, the hook files and the door its openings.
func Wrap(l Launch) (argv, writable []string, err error) {
	prog, err := exec.LookPath(sandbox.LocalProgram)
	if err != nil {
		return nil, nil, fault.Usagef("--sandbox: %s is not installed any more (%s)", sandbox.LocalProgram, sandbox.LocalInstallHint)
	}
	cliDirs, err := prepare(l.CLIPaths, l.Home, l.Env)
	if err != nil {
		return nil, nil, fmt.Errorf("task %s: %w", l.ID, err)
	}
	made, err := prepare(l.UserPaths, l.Home, l.Env)
	if err != nil {
		return nil, nil, fmt.Errorf("task %s: %w", l.ID, err)
	}
	var binds [][2]string
	if l.CopiesDir != "" {
		if binds, err = l.copies(cliDirs); err != nil {
			return nil, nil, err
		}
	} else {
		made = append(made, cliDirs...)
	}
	if err := os.MkdirAll(l.DoorDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("task %s: its door: %w", l.ID, err)
	}
	spec := SpecFor(l.Place, made)
	// What the agent reads that /tmp holds would vanish under the private
	// /tmp: its program, runner (its hook), the PATH, HOME (a test's),
	// each as it really is (an npm bin/ entry is a link into lib/).
	read := append([]string{filepath.Dir(l.Argv[0]), l.Argv[0], filepath.Dir(l.Exe), l.Exe, l.Home}, filepath.SplitList(l.Path)...)
	if p, err := exec.LookPath(l.Argv[0]); err == nil {
		read = append(read, filepath.Dir(p), p)
	}
	spec.Readable = sandbox.Readable(read)
	spec.Binds = binds
	writable = spec.Writable
	for _, b := range binds {
		writable = append(writable, b[1]+" (the task's copy)")
	}
	cmd := l.Argv
	if l.Verify {
		if cmd, err = verified(spec, l.Exe, l.Argv); err != nil {
			return nil, nil, fmt.Errorf("task %s: %w", l.ID, err)
		}
	}
	wrapped, err := sandbox.WrapLocal(prog, spec, Temp(l.ID), cmd)
	if err != nil {
		return nil, nil, fault.Usagef("--sandbox: %v", err)
	}
	return wrapped, writable, nil
}

// prepare expands paths for this HOME and environment and makes the
// directories among them that are missing.
func prepare(paths []string, home string, env []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if x := sandbox.Expand(p, home, env); x != "" {
			out = append(out, x)
		}
	}
	return sandbox.Prepare(out)
}

// copies copies the CLI's directories for the task (recorded with it)
// and returns them bound over the real ones: nothing the agent writes
// there reaches the user's.
func (l Launch) copies(cliDirs []string) ([][2]string, error) {
	copies, err := HomeCopies(l.CopiesDir, l.Home, cliDirs)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", l.ID, err)
	}
	var binds [][2]string
	for _, p := range cliDirs {
		binds = append(binds, [2]string{copies[p], p})
	}
	if err := l.SaveCopies(copies); err != nil {
		return nil, err
	}
	return binds, nil
}

// Shadow is what the sandbox of a shadow of a task (runner ask) is made
// from (WrapShadow).
type Shadow struct {
	ID, Dir    string            // the task's id and folder
	HomeCopies map[string]string // the task's own copies of its CLI's directories, if any
	Home       string
	Getenv     func(string) string
	Env        []string // the environment (for the paths' $VARS)
	StateDir   string   // runner's state directory
	Socket     string   // the tmux server's socket
	CLIPaths   []string // the profile's sandbox_paths
	Argv       []string // the shadow's headless command
	// WriteDir lets the command write Dir (and the repository's git
	// directory, GitCommon): a group's check run in a candidate's
	// worktree.
	WriteDir  bool
	GitCommon string
}

// WrapShadow returns the shadow's command in a sandbox: it reads what it
// likes, writes only the CLI's own state directories (the task's copies
// of them when it has some), and sees nothing of runner's.
func WrapShadow(s Shadow) ([]string, error) {
	prog, err := exec.LookPath(sandbox.LocalProgram)
	if err != nil {
		return nil, fault.Usagef("the shadow of sandboxed task %s runs sandboxed, and %s is not installed (%s)", s.ID, sandbox.LocalProgram, sandbox.LocalInstallHint)
	}
	made, err := prepare(s.CLIPaths, s.Home, s.Env)
	if err != nil {
		return nil, fmt.Errorf("shadow of %s: %w", s.ID, err)
	}
	var binds [][2]string
	if len(s.HomeCopies) > 0 {
		made = nil
		for p, c := range s.HomeCopies {
			binds = append(binds, [2]string{c, p})
		}
		slices.SortFunc(binds, func(a, b [2]string) int { return strings.Compare(a[1], b[1]) })
	}
	place := Place{Home: s.Home, Getenv: s.Getenv, StateDir: s.StateDir, Socket: s.Socket}
	if s.WriteDir {
		place.Dir, place.GitCommon = s.Dir, s.GitCommon
	}
	spec := SpecFor(place, made)
	spec.Binds = binds
	read := []string{filepath.Dir(s.Argv[0]), s.Argv[0], s.Home, s.Dir}
	read = append(read, filepath.SplitList(s.Getenv("PATH"))...)
	spec.Readable = sandbox.Readable(read)
	wrapped, err := sandbox.WrapLocal(prog, spec, Temp(s.ID), s.Argv)
	if err != nil {
		return nil, fault.Usagef("the shadow of sandboxed task %s: %v", s.ID, err)
	}
	return wrapped, nil
}

// SandboxExec is runner's command that checks a sandbox from inside and
// then runs the agent (see Launch.Verify).
const SandboxExec = "sandbox-exec"

// verified is argv started by runner's sandbox-exec with the writable
// binds of spec as they are now (sandbox.Expect).
func verified(spec sandbox.Spec, exe string, argv []string) ([]string, error) {
	exps, err := sandbox.Expect(spec)
	if err != nil {
		return nil, err
	}
	cmd := []string{exe, SandboxExec}
	for _, e := range exps {
		cmd = append(cmd, "--expect", e.String())
	}
	return append(append(cmd, "--"), argv...), nil
}
