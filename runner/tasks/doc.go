// Package tasks is what a user does with tasks once they run, above
// package runner: list them (List, `runner ps`), wait for them (Wait, All:
// `runner wait`), and put a terminal on one (AttachArgv: `runner attach`).
package tasks
