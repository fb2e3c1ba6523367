package exit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/state"
)

// Exit codes shared by every command. They are documented in `runner --help`;
// cmd/runner maps errors to them in one place.
const (
	ExitOK          = 0   // done
	ExitFailed      = 1   // task failed or agent error; a merge conflict, or one forecast (merge --check)
	ExitUsage       = 2   // usage or bad input
	ExitTimeout     = 3   // a wait or a task timed out
	ExitNeedsInput  = 4   // stopped because the agent needs input
	ExitBusy        = 5   // a lock is held by someone else
	ExitBudget      = 6   // a task's budget (dispatch --max-turns, --budget-tokens, --budget-usd) stopped it
	ExitLimited     = 7   // the agent's provider usage or rate limit stopped it (dispatch --on-limit fail)
	ExitInterrupted = 130 // SIGINT or SIGTERM
)

// ErrUsage marks bad input from the user: a wrong name, a missing directory,
// a malformed flag value. Commands exit 2 on it.
var ErrUsage = errors.New("bad input")

// ErrNeedsInput marks a task that stopped because its agent asks a question
// nobody answered. Commands exit 4 on it.
var ErrNeedsInput = errors.New("agent needs input")

// Usagef returns an error that wraps ErrUsage with a formatted message.
// The message should say what was wrong and how to fix it.
func Usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }

// ExitError carries an explicit exit code, for commands whose exit status is
// someone else's (e.g. `runner tmux exec` exits with the command's code).
// A nil Err means nothing is printed.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *ExitError) Unwrap() error { return e.Err }

// ErrBudget marks a task that a budget stopped: it ended failed with a
// reason starting BudgetReason. Commands exit 6 on it.
var ErrBudget = errors.New("over budget")

// BudgetReason starts the reason of a task a budget stopped.
const BudgetReason = "budget: "

// ErrLimited marks a task that its agent's provider usage or rate limit
// stopped (--on-limit fail): it ended failed with a reason starting
// LimitReason. Commands exit 7 on it.
var ErrLimited = errors.New("usage limit reached")

// LimitReason starts the reason of a task a usage limit stopped.
const LimitReason = "limited: "

// OfTask is the exit code task t's outcome stands for: OfStatus, 6 for a
// task a budget stopped, 7 for one a usage limit did.
func OfTask(t *state.Task) int {
	if t.Status == state.StatusFailed {
		for i := len(t.History) - 1; i >= 0; i-- {
			if h := t.History[i]; h.Status == state.StatusFailed {
				switch {
				case strings.HasPrefix(h.Reason, BudgetReason):
					return ExitBudget
				case strings.HasPrefix(h.Reason, LimitReason):
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
