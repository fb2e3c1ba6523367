// Package exitcode is runner's one table from errors to exit codes, shared
// by the two programs of cmd/runner (runner, runner-ext): the packages
// below cmd return errors of a kind (package fault, or their own
// sentinels) and only this edge knows the numbers (docs/exit-codes.md).
package exitcode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/group"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Exit codes shared by every command, documented in `runner --help` (EXIT
// STATUS) and docs/exit-codes.md. Only cmd knows them: the packages below
// return errors of a kind (package fault, or their own sentinels) and Of
// maps them here.
const (
	ExitOK          = 0   // done
	ExitFailed      = 1   // task failed or agent error; a merge conflict, or one forecast (merge --check)
	ExitUsage       = 2   // usage or bad input
	ExitTimeout     = 3   // a wait or a task timed out
	ExitNeedsInput  = 4   // stopped because the agent needs input
	ExitBusy        = 5   // a lock is held by someone else, or a task still runs
	ExitBudget      = 6   // a task's budget (dispatch --max-turns, --budget-tokens, --budget-usd) stopped it
	ExitLimited     = 7   // the agent's provider usage or rate limit stopped it (dispatch --on-limit fail)
	ExitSomeFailed  = 8   // a group where some candidates succeeded and some did not
	ExitInterrupted = 130 // SIGINT or SIGTERM
)

// Error carries an explicit exit code, for commands whose exit status is
// someone else's (e.g. `runner tmux exec` exits with the command's code).
// A nil Err means nothing is printed.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// OfTask is the exit code task t's outcome stands for: OfStatus, 6 for a
// task a budget stopped, 7 for one a usage limit did.
func OfTask(t *state.Task) int {
	if t.Status == state.StatusFailed {
		for i := len(t.History) - 1; i >= 0; i-- {
			if h := t.History[i]; h.Status == state.StatusFailed {
				switch {
				case strings.HasPrefix(h.Reason, fault.BudgetReason):
					return ExitBudget
				case strings.HasPrefix(h.Reason, fault.LimitReason):
					return ExitLimited
				}
				break
			}
		}
	}
	return OfStatus(t.Status)
}

// OfStatus is the exit code a task's status stands for: 0 done, 3 timeout,
// 4 needs input, 1 anything else that ended it.
func OfStatus(st state.Status) int {
	switch st {
	case state.StatusDone:
		return ExitOK
	case state.StatusTimeout:
		return ExitTimeout
	case state.StatusNeedsInput:
		return ExitNeedsInput
	}
	return ExitFailed
}

// Of is the one table from errors to exit codes (see EXIT STATUS in
// `runner --help`). A merge's conflict is 1 (gitsnap.ErrConflict, as an
// *ExitError); so is a conflict merge --check forecasts, and merge
// --all stopped by a conflict: one meaning of 1 for the merge commands.
func Of(err error) int {
	var ee *Error
	var pe *cmdkit.ProgramExit
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &pe): // a program's own, runner tmux exec's
		return pe.Status
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case IsFlagError(err), errors.Is(err, fault.ErrUsage), isCobraUsage(err),
		errors.Is(err, tmuxctl.ErrBadTarget), errors.Is(err, tmuxctl.ErrBadKey), errors.Is(err, tmuxctl.ErrNotFound),
		errors.Is(err, tmuxctl.ErrUnsafeSocket), errors.Is(err, door.ErrRefused):
		return ExitUsage
	case errors.Is(err, gitsnap.ErrNotRepo), errors.Is(err, gitsnap.ErrBareRepo), errors.Is(err, gitsnap.ErrNotFound), errors.Is(err, gitsnap.ErrAmbiguous), errors.Is(err, gitsnap.ErrBadID), errors.Is(err, gitsnap.ErrExists):
		return ExitUsage
	case errors.Is(err, gitsnap.ErrConflict):
		return ExitFailed
	case errors.Is(err, gitsnap.ErrLocked), errors.Is(err, fault.ErrBusy):
		return ExitBusy
	case errors.Is(err, tmuxctl.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, runner.ErrTaskTimeout),
		errors.Is(err, ask.ErrTimeout):
		return ExitTimeout
	case errors.Is(err, fault.ErrNeedsInput):
		return ExitNeedsInput
	case errors.Is(err, fault.ErrBudget):
		return ExitBudget
	case errors.Is(err, fault.ErrLimited):
		return ExitLimited
	case errors.Is(err, state.ErrGroupNotFound):
		return ExitUsage
	case errors.Is(err, ask.ErrFailed), errors.Is(err, group.ErrNoCandidate):
		return ExitFailed
	case errors.Is(err, state.ErrBusy):
		return ExitBusy
	case errors.Is(err, state.ErrTaskNotFound), errors.Is(err, state.ErrAmbiguousTask), errors.Is(err, state.ErrUntrustedDir):
		return ExitUsage
	default:
		return ExitFailed
	}
}

// HTTPStatus is the one table from exit codes to HTTP statuses (runner
// serve, serve.Options.Status): 2 (usage, bad input) 400, 5 (busy; for
// answer, a dialog that is no longer on the screen) 409, 3 (timeout) 504,
// 1, 4, 6, 7 and 8 (the command ran and refused or failed) 422, 130
// (interrupted) 503, anything else 500. Numbers, not net/http's names:
// runner itself links no HTTP package (issue 51).
func HTTPStatus(code int) int {
	switch code {
	case ExitUsage:
		return 400
	case ExitBusy:
		return 409
	case ExitTimeout:
		return 504
	case ExitFailed, ExitNeedsInput, ExitBudget, ExitLimited, ExitSomeFailed:
		return 422
	case ExitInterrupted:
		return 503
	}
	return 500
}

// Meaning is an exit code in words (runner mcp's tool errors,
// mcpserver.Options.Meaning).
func Meaning(code int) string {
	switch code {
	case ExitFailed:
		return "the task failed, or runner did"
	case ExitUsage:
		return "usage or bad input"
	case ExitTimeout:
		return "timeout"
	case ExitNeedsInput:
		return "the task needs input"
	case ExitBusy:
		return "busy"
	case ExitBudget:
		return "a budget stopped the task"
	case ExitLimited:
		return "the agent's usage or rate limit stopped the task"
	case ExitSomeFailed:
		return "some candidates of the group failed"
	case ExitInterrupted:
		return "interrupted"
	}
	return "error"
}

// Hint is what the user can do about err with runner's own flags, said
// after the error: the packages below cmd know no flag, so the remedy that
// names one is added here, beside the exit code (empty for none).
func Hint(err error) string {
	switch {
	case errors.Is(err, state.ErrProjectLocked):
		return " (wait for it: dispatch --exclusive --wait-lock)"
	}
	return ""
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

// IsFlagError reports whether err is an error in a command's flags or
// arguments (cmdkit.FlagError): exit 2, with a pointer to --help.
func IsFlagError(err error) bool {
	var fe *cmdkit.FlagError
	return errors.As(err, &fe)
}

// Print says err on errOut as runner does, "runner: " and the error and
// its hint (Hint), or as one JSON object {error, exit_code} on rawErr when
// the command ran with --json; nothing for an error the command already
// said (an Error without Err, a cmdkit.SilentError or ProgramExit).
func Print(err error, code int, asJSON bool, errOut, rawErr io.Writer) {
	var ee *Error
	var se *cmdkit.SilentError
	var pe *cmdkit.ProgramExit
	if errors.As(err, &ee) && ee.Err == nil || errors.As(err, &se) || errors.As(err, &pe) {
		return // the command already said what it had to
	}
	msg := err.Error() + Hint(err)
	if asJSON {
		b, _ := json.Marshal(struct {
			Error    string `json:"error"`
			ExitCode int    `json:"exit_code"`
		}{msg, code})
		fmt.Fprintln(rawErr, string(b))
		return
	}
	fmt.Fprintf(errOut, "runner: %s\n", msg)
	if code == ExitUsage && IsFlagError(err) {
		fmt.Fprintln(errOut, "Run 'runner --help' for usage.")
	}
}
