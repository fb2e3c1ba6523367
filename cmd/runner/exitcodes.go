package main

import (
	"context"
	"errors"
	"strings"

	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/runner/exit"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

// exitCode is the one table from errors to exit codes (see EXIT STATUS in
// `runner --help`). A merge's conflict is 1 (gitsnap.ErrConflict, as an
// *exit.ExitError); so is a conflict merge --check forecasts, and merge
// --all stopped by a conflict: one meaning of 1 for the merge commands.
func exitCode(err error) int {
	var ee *exit.ExitError
	switch {
	case err == nil:
		return exit.ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, context.Canceled):
		return exit.ExitInterrupted
	case isFlagError(err), errors.Is(err, exit.ErrUsage), isCobraUsage(err),
		errors.Is(err, tmuxctl.ErrBadTarget), errors.Is(err, tmuxctl.ErrBadKey), errors.Is(err, tmuxctl.ErrNotFound):
		return exit.ExitUsage
	case errors.Is(err, gitsnap.ErrNotRepo), errors.Is(err, gitsnap.ErrBareRepo), errors.Is(err, gitsnap.ErrNotFound), errors.Is(err, gitsnap.ErrAmbiguous), errors.Is(err, gitsnap.ErrBadID), errors.Is(err, gitsnap.ErrExists):
		return exit.ExitUsage
	case errors.Is(err, gitsnap.ErrLocked):
		return exit.ExitBusy
	case errors.Is(err, tmuxctl.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, runner.ErrTaskTimeout),
		errors.Is(err, ask.ErrTimeout):
		return exit.ExitTimeout
	case errors.Is(err, exit.ErrNeedsInput):
		return exit.ExitNeedsInput
	case errors.Is(err, exit.ErrBudget):
		return exit.ExitBudget
	case errors.Is(err, exit.ErrLimited):
		return exit.ExitLimited
	case errors.Is(err, ask.ErrFailed):
		return exit.ExitFailed
	case errors.Is(err, state.ErrBusy):
		return exit.ExitBusy
	case errors.Is(err, state.ErrTaskNotFound), errors.Is(err, state.ErrAmbiguousTask), errors.Is(err, state.ErrUntrustedDir):
		return exit.ExitUsage
	default:
		return exit.ExitFailed
	}
}

// isCobraUsage recognises the few usage errors cobra returns as plain errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command ", "unknown flag", "unknown shorthand flag", "required flag", "accepts ", "requires at least ", "requires at most ", "invalid argument "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// args wraps a cobra positional-argument validator so its errors exit 2.
func args(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := v(cmd, a); err != nil {
			return &flagError{err}
		}
		return nil
	}
}
