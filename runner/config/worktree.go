package config

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/runner-cli/runner/runner/profile"
)

// WorktreeSetup says how a task's new worktree is made ready before its
// agent starts (config worktree_setup). Paths are relative to the top of
// the project's repository; a path that is not there is skipped.
type WorktreeSetup struct {
	// Copy lists files or directories copied into the worktree (the
	// agent may change its copy).
	Copy []string `json:"copy,omitempty"`
	// Symlink lists files or directories linked from the worktree to the
	// project's (shared: node_modules, a build cache).
	Symlink []string `json:"symlink,omitempty"`
	// Run is a command (argv, never through a shell) run in the
	// worktree's start directory after the files; its output goes to the
	// task's log, and its failure fails the task.
	Run []string `json:"run,omitempty"`
	// RunTimeout bounds Run (default 10 minutes).
	RunTimeout profile.Duration `json:"run_timeout,omitzero"`
}

// Check refuses paths that leave the repository and an empty command.
func (w *WorktreeSetup) Check() error {
	if w == nil {
		return nil
	}
	for _, p := range append(append([]string(nil), w.Copy...), w.Symlink...) {
		if !filepath.IsLocal(p) {
			return fmt.Errorf("%q is not a path inside the repository", p)
		}
	}
	if len(w.Run) > 0 && w.Run[0] == "" {
		return errors.New("run: an empty command")
	}
	return nil
}
