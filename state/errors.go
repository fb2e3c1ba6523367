package state

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrBusy is wrapped when the state lock could not be taken within the
	// store's LockTimeout (exit 5).
	ErrBusy = errors.New("state is busy")
	// ErrCorrupt is wrapped when state.json does not parse.
	ErrCorrupt = errors.New("state file is corrupt")
	// ErrNewerVersion is wrapped when state.json was written by a newer runner.
	ErrNewerVersion = errors.New("state file is from a newer version")
	// ErrTaskNotFound is wrapped when no task matches a reference.
	ErrTaskNotFound = errors.New("task not found")
	// ErrAmbiguousTask is wrapped when several tasks match a reference.
	ErrAmbiguousTask = errors.New("ambiguous task reference")
)

// ErrProjectLocked is wrapped when another exclusive task holds a
// project's lock; errors.Is(err, ErrBusy) is true of it too (exit 5).
var ErrProjectLocked error = projectLocked{}

type projectLocked struct{}

func (projectLocked) Error() string        { return "the project is busy" }
func (projectLocked) Is(target error) bool { return target == ErrBusy }

// BusyError says the state lock was held by someone else for longer than the
// timeout.
type BusyError struct {
	Lock    string
	Timeout time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("state is busy: lock %s held by another runner for more than %v (try again; if it persists, look for a stuck runner process with 'fuser %s')",
		e.Lock, e.Timeout, e.Lock)
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// CorruptError says a state file does not parse. The file is left in place.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("state file %s is corrupt: %v (it was left untouched; move it aside and rebuild with 'runner state repair')", e.Path, e.Err)
}

// Unwrap returns the parse error.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// NewerVersionError says a state file was written by a newer runner. The file
// is never overwritten.
type NewerVersionError struct {
	Path    string
	Version int // the file's version
}

func (e *NewerVersionError) Error() string {
	return fmt.Sprintf("state file %s has schema version %d but this runner understands only up to %d: it was written by a newer runner and was left untouched (upgrade runner, or move the file aside with 'runner state repair --force' to start over)",
		e.Path, e.Version, Version)
}

// Is makes errors.Is(err, ErrNewerVersion) true.
func (e *NewerVersionError) Is(target error) bool { return target == ErrNewerVersion }
