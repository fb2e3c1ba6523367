// Package snapshotcmd is `runner snapshot` (take, list, show, diff,
// restore, prune): a git work tree's state recorded, compared and
// restored, here or on a registered host (--host: gitsnap runs over the
// host's ssh connection). It parses the flags, calls gitsnap, asks before
// a restore, and prints runner/snapshots' words or --json; gitsnap's
// sentinel errors (no repository, no such snapshot, a lock held) and
// package fault's kinds reach package main, which maps them to exit codes.
package snapshotcmd
