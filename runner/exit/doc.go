// Package exit holds what every command exits with: the exit codes, the
// error kinds that map to them (ErrUsage, ErrNeedsInput, ExitError) and
// Usagef, the constructor for bad-input errors. It imports nothing of the
// module, so every package of it can return these errors.
package exit
