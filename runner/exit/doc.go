// Package exit holds what every command exits with: the exit codes, the
// error kinds that map to them (ErrUsage, ErrNeedsInput, ExitError) and
// Usagef, the constructor for bad-input errors; and OfStatus, the code a
// task's status stands for. It imports only state (a leaf), so every
// package of the module above state can return these errors.
package exit
