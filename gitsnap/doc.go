// Package gitsnap is the only code that runs git: snapshots of a working tree
// taken on a temporary index (never touching the user's index, worktree, HEAD,
// branch or stash), listing, diff, restore, the files a task changed since
// its snapshot (Changed), the post-task commit protocol, task worktrees,
// their merge and its forecast (MergeForecast: merge-tree on scratch
// commits, nothing of the user's touched), and for a group one snapshot
// shared by its candidates (Alias) and two worktrees compared (Between).
//
// A snapshot (Take) copies the user's index to a temporary file, keeping its
// modification time so git's racy-entry checks behave as on the original,
// runs `git add -A` on the copy (only changed files are hashed, .gitignore is
// honoured, submodules become gitlinks), then write-tree, commit-tree with
// HEAD as parent and update-ref refs/runner/snapshots/<id>. The refs keep the
// objects safe from git gc until Prune deletes them. A snapshot's metadata
// (label, time, base, branch, dirty, counts) is written as "Runner-*" lines
// in the commit message, so List and Get read everything from git.
//
// Every git invocation goes through one helper (run): it takes a context,
// keeps git's stderr in the returned *GitError, drops variables that would
// redirect git elsewhere (GIT_DIR, GIT_INDEX_FILE, ...), sets
// GIT_OPTIONAL_LOCKS=0 and LC_ALL=C, runs no hooks (core.hooksPath=/dev/null)
// and never signs. Commands that take a lock held by another git process
// (index.lock, a ref lock) are retried with backoff, then fail with an error
// wrapping ErrLocked. When the user has no git identity, commits fall back to
// "runner <runner@localhost>". A context made by On runs all of it on
// another machine through an ssh transport (git there, and gitsnap's few
// file operations as small sh scripts).
//
// Caveats: Restore writes only what differs between the current state and
// the snapshot; it never recurses into submodules (their changes are reported
// as skipped) and leaves the index and ignored files alone, except that an
// ignored file in the way of a restored path is replaced. Commit on the
// current branch replaces the index under index.lock; with
// CommitOptions.Branch it only creates runner/<task-id>.
package gitsnap
