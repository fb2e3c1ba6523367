// Package worktree is what a user does with the worktrees of tasks started
// with dispatch --worktree: list them (List: branch, state, merged or
// not, dirty or not, on every host) and merge a task's branch (Merge).
// Making a task's worktree is a launch strategy and lives in package
// runner (startWorktree); removing finished ones is gc's.
package worktree
