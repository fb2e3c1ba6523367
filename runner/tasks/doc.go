// Package tasks is what a user does with tasks once they run, above
// package runner: list them (List, `runner ps`), wait for them (Wait, All:
// `runner wait`), and put a terminal on one (AttachArgv: `runner attach`).
//
// It takes a Deps (the store, the tmux server, the hosts, and runner's
// Reconcile as a function), built by cmd/runner from its Env; it imports
// nothing of package runner.
package tasks
