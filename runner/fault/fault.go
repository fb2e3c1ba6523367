package fault

import (
	"errors"
	"fmt"
)

// ErrUsage marks bad input from the user: a wrong name, a missing directory,
// a malformed flag value. Commands exit 2 on it.
var ErrUsage = errors.New("bad input")

// ErrNeedsInput marks a task that stopped because its agent asks a question
// nobody answered. Commands exit 4 on it.
var ErrNeedsInput = errors.New("agent needs input")

// ErrBusy marks a thing someone else holds or is still changing: a task
// still running that a command would change under it. Commands exit 5 on
// it, as on a lock held (state.ErrBusy).
var ErrBusy = errors.New("busy")

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

// Usagef returns an error that wraps ErrUsage with a formatted message.
// The message should say what was wrong and how to fix it.
func Usagef(format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), kind: ErrUsage}
}

// Busyf returns an error that wraps ErrBusy with a formatted message,
// which should say what holds the thing and how to wait for it.
func Busyf(format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), kind: ErrBusy}
}

// kindError is an error of one kind whose message is its own (not the
// kind's text).
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }
