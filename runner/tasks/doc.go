// Package tasks is what a user does with tasks once they run, above
// package runner: list them (List, `runner ps`), wait for them (Wait, All:
// `runner wait`), put a terminal on one (AttachArgv: `runner attach`),
// show the tree of tasks that dispatched tasks (Tree, Collect: `runner
// tree`, `runner collect`) and what they spent (Usage: `runner usage`),
// and writes them for people (WriteList: `runner ps`; WriteStatus:
// `runner status`; WriteUsage), and copies a task's transcript as it
// grows (CopyLog: `runner logs`).
//
// It takes a Deps (the store, the tmux server, the hosts as Host, an
// interface it declares, progress, and runner's Reconcile and cmd's exit
// table as functions), built by
// cmd/runner from its Env; it imports nothing of package runner.
package tasks
