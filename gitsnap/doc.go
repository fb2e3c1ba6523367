// Package gitsnap is the only code that runs git: snapshots of a working tree
// taken on a temporary index (never touching the user's index, worktree, HEAD,
// branch or stash), listing, diff, restore and the post-task commit protocol.
package gitsnap
