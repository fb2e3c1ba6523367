// Package hookinstall writes an agent CLI's turn-end hook for a task
// (Install): the profile's hook rendered with runner's own binary as its
// command (which appends the turn's end to the task's events file), its
// settings file where the CLI reads it, and the user's own hook chained
// after it. A CLI
// that would not read the file (a system settings file root must own)
// gets none, and the screen ends its turns.
package hookinstall

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/runner-cli/runner/internal/atomicfile"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/tmuxctl"
)

// Place is where a task's hook lives: runner's binary (run as the hook),
// the task, its events file and its hook folder, and where to say that a
// hook cannot be used.
type Place struct {
	Exe    string
	TaskID string
	Events string
	Dir    string
	Say    func(format string, args ...any)
}

// Install renders the profile's turn-end hook for the task at pl: the
// arguments and environment it adds to the agent's launch (none when the
// CLI would not read it: said, and the screen ends each turn), its
// settings file written. penv is the pane's environment.
func Install(pl Place, prof *profile.Profile, penv []string) (args, hookEnv []string, err error) {
	chain, err := profile.UserHookChain(prof.Hook, penv, os.Getenv, os.ReadFile)
	if err != nil {
		// runner's notify would replace the user's: refuse rather than
		// drop it silently.
		return nil, nil, fault.Usagef("agent %s: runner's turn-end hook would replace your own, which cannot be read: %v (fix the file, or run without runner's hook: --no-hook)", prof.Name, err)
	}
	paths := profile.HookPaths{
		Command: tmuxctl.ShellQuote(pl.Exe) + " hook --task " + pl.TaskID,
		Events:  pl.Events,
		Dir:     pl.Dir,
		Chain:   chain,
	}
	hl, err := prof.Hook.Render(paths)
	if err != nil {
		return nil, nil, fmt.Errorf("agent %s: %w", prof.Name, err)
	}
	why := hookUnusable(prof.Hook, hl.SettingsPath)
	if why != "" && prof.Hook.RootOwned && os.Geteuid() == 0 {
		// runner runs as root (a container, CI) with its state where
		// others may write (under /tmp): a directory of root's that
		// nobody else may write serves instead.
		if st, err := os.Stat(filepath.Dir(RootHookDir)); err == nil && st.IsDir() {
			paths.Dir = filepath.Join(RootHookDir, pl.TaskID)
			if alt, err := prof.Hook.Render(paths); err == nil && hookUnusable(prof.Hook, alt.SettingsPath) == "" {
				hl, why = alt, ""
			}
		}
	}
	if why != "" {
		pl.Say("task %s: %s: no turn-end hook (%s); the screen ends each turn", pl.TaskID, prof.Name, why)
		return nil, nil, nil
	}
	files := hl.Files
	if hl.Settings != nil {
		files = append([]profile.HookFile{{Path: hl.SettingsPath, Data: hl.Settings}}, files...)
	}
	for _, f := range files {
		if err := atomicfile.Write(f.Path, f.Data, 0o600, false); err != nil {
			return nil, nil, fmt.Errorf("agent %s: write the hook file %s: %w (check the state directory's permissions)", prof.Name, f.Path, err)
		}
	}
	if hookEnv, err = prof.HookEnv(penv, hl); err != nil {
		return nil, nil, err
	}
	return hl.Args, hookEnv, nil
}

// RootHookDir holds the hook files of a CLI that reads them only from
// directories root owns and nobody else may write (Hook.RootOwned), when
// runner runs as root and its state directory does not qualify: on tmpfs,
// gone at reboot.
const RootHookDir = "/run/runner-hooks"

// hookUnusable says why a hook's settings file at path would not be read
// by its CLI ("" when it would): a RootOwned file needs root to own it and
// every directory above it, none writable by group or others.
func hookUnusable(h *profile.Hook, path string) string {
	if !h.RootOwned || path == "" {
		return ""
	}
	if os.Geteuid() != 0 {
		return "the CLI reads its system settings file only when root owns it, and runner does not run as root"
	}
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil {
			if st.Mode().Perm()&0o022 != 0 {
				return fmt.Sprintf("the CLI does not read a system settings file under %s, which group or others may write", d)
			}
			if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid != 0 {
				return fmt.Sprintf("the CLI does not read a system settings file under %s, which root does not own", d)
			}
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}
