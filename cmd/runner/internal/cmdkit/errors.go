package cmdkit

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// FlagError marks an error in a command's flags or arguments: package
// main exits 2 on it and points at --help.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }

// Unwrap returns the error in the flags.
func (e *FlagError) Unwrap() error { return e.Err }

// Args wraps a cobra positional-argument validator so that its errors are
// FlagErrors.
func Args(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := v(cmd, a); err != nil {
			return &FlagError{err}
		}
		return nil
	}
}

// SilentError is an error the command has already said (its output says
// what was wrong): package main prints nothing more and exits as Kind
// says (fault.ErrUsage: 2).
type SilentError struct{ Kind error }

func (e *SilentError) Error() string { return e.Kind.Error() }

// Unwrap returns the kind.
func (e *SilentError) Unwrap() error { return e.Kind }

// ProgramExit is the exit status of a program a command ran for the user
// (`runner tmux exec`): runner exits with it, printing nothing more. It is
// the program's, not one of runner's exit codes.
type ProgramExit struct{ Status int }

func (e *ProgramExit) Error() string { return fmt.Sprintf("exit status %d", e.Status) }

// CheckDurations refuses a negative value for any duration flag given to
// c (--timeout -5s was taken as "no time at all"): a usage error before
// anything is done.
func CheckDurations(c *cobra.Command) error {
	var bad error
	c.Flags().Visit(func(f *pflag.Flag) {
		if bad == nil && f.Value.Type() == "duration" && strings.HasPrefix(f.Value.String(), "-") {
			bad = &FlagError{fmt.Errorf("--%s %s: must not be negative", f.Name, f.Value)}
		}
	})
	return bad
}

// JSONArgs reports whether args ask for JSON (--json before any "--"):
// then every error is printed as JSON too, also those cobra reports
// before a command runs (bad flags, missing arguments).
func JSONArgs(args []string) bool {
	for _, arg := range args {
		if arg == "--" {
			return false
		}
		if arg == "--json" || arg == "--json=true" {
			return true
		}
	}
	return false
}
