// Package statecmd is `runner state` (path, show, repair: runner's shared
// state looked at and mended) and `runner prune` (finished tasks removed
// now). It parses their flags, opens the state store through the
// cmdkit.Factory, calls package state, runner/stateinfo and
// runner/projects, and prints their answer or --json; their errors (a
// state written by a newer runner, a lock held) are of kinds package main
// maps to exit codes.
package statecmd
