// Package fault holds the kinds of error that decide how a command exits:
// bad input (ErrUsage, made by Usagef), an agent that needs input
// (ErrNeedsInput), a task a budget or a usage limit stopped (ErrBudget,
// ErrLimited, and the reasons recorded on such a task), and a thing
// someone else holds (ErrBusy, made by Busyf). It knows no exit code: the
// one table from errors to exit codes is cmd/runner's exitCode, and the
// packages below cmd return these kinds (or their own sentinel errors,
// such as gitsnap.ErrConflict) for it to map. It imports nothing of the
// module, so every package can return them.
package fault
