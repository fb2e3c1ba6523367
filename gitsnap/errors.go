package gitsnap

import "errors"

// ErrNotRepo is wrapped when the directory is not inside a git work tree.
// Dispatch records it as "no snapshot: not a git repository".
var ErrNotRepo = errors.New("not a git repository")

// ErrBareRepo is wrapped when the directory is a bare repository: there is no
// work tree to snapshot.
var ErrBareRepo = errors.New("bare repository has no work tree")

// ErrGitMissing is wrapped when the git executable cannot be found in PATH.
var ErrGitMissing = errors.New("git not found")

// ErrLocked is wrapped when another git process held a lock (index.lock or a
// ref lock) for longer than the retry budget.
var ErrLocked = errors.New("git lock held by another process")

// ErrNotFound is wrapped when no snapshot matches an ID or prefix.
var ErrNotFound = errors.New("no such snapshot")

// ErrAmbiguous is wrapped when an ID prefix matches more than one snapshot.
var ErrAmbiguous = errors.New("ambiguous snapshot ID")

// ErrExists is wrapped when a snapshot or branch with the requested name
// already exists.
var ErrExists = errors.New("already exists")

// ErrBadID is wrapped when a snapshot ID contains characters a ref name
// cannot hold.
var ErrBadID = errors.New("invalid snapshot ID")

// ErrDirtyAtSnapshot is wrapped by Commit when the tree already had changes
// when the task's snapshot was taken, so the task's changes cannot be told
// apart from the user's; CommitOptions.All overrides it.
var ErrDirtyAtSnapshot = errors.New("tree was already dirty at snapshot time")

// ErrInProgress is wrapped by Commit when a merge, rebase, cherry-pick or
// revert is in progress.
var ErrInProgress = errors.New("operation in progress")

// ErrDetachedHead is wrapped by Commit when HEAD is detached and no branch
// was asked for.
var ErrDetachedHead = errors.New("HEAD is detached")
