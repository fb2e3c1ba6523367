// Package runner is the domain of the runner tool: projects, the dispatch
// lifecycle, the supervisor, messages between tasks and notifications.
// Agent profiles and screen detection live in runner/profile; exit codes
// and error kinds in runner/exit.
//
// It is the only package that combines the three leaves (tmuxctl, state,
// gitsnap); the leaves never import each other or this package. cmd/runner
// only parses flags, calls into this package and prints.
package runner
