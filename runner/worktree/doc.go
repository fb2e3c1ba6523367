// Package worktree is what a user does with the worktrees of tasks started
// with dispatch --worktree: list them (List: branch, state, merged or
// not, dirty or not, the merge forecast, on every host), merge a task's
// branch (Merge), forecast a merge without touching anything (CheckMerge:
// conflicts with the target and, pairwise, with the other unmerged task
// branches of the repository; CheckMerges: several tasks in one look, for
// a group) and merge every done task's branch in an order that avoids the
// conflicts it can (MergeAll), and show what a task changed since its
// snapshot (Diff).
// Making a task's worktree is a launch strategy, package runner's with
// runner/worktree/setup (Start); removing finished ones is gc's.
//
// It takes a Deps (the store and the task record, the clock and warnings,
// git through Git, an interface it declares (Gitsnap: package gitsnap's
// functions; a fake in the tests), the place git runs for a task or a
// host, and runner's Reconcile and GetTask through Core), built by
// cmd/runner from its Env; it imports nothing of package runner.
package worktree
