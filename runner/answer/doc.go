// Package answer gives a guarded answer to a task's dialog (runner
// answer; the HTTP API and MCP run that command): the option is pressed
// only if the task waits for input and its pane still shows the dialog
// whose digest the caller read (runner/dialog), the same operation id is
// never pressed twice, and every answer leaves a receipt in the task's
// record (state.AnswerReceipt) and the journal.
//
// The steps: under the state lock, a receipt of the operation is found
// (a replay: it is returned, nothing pressed) or reserved (pending), so
// that two requests with the same id press once; a task that is not
// needs_input, or that another operation is pressing, is refused. Then,
// without the lock, the screen is read: a dialog with another digest (or
// none) is refused (ErrStale, nothing pressed), an option not in it is bad
// input. The option is chosen by its label: the menu's cursor (the
// profile's menu_cursor, profile.MenuMove) is moved onto it and the screen
// read again, digest checked, right before Enter; a profile without a
// menu cursor gets the option's key alone. The reservation is held until
// the dialog left the screen (at most LeaveWait), so no other answer
// presses onto it meanwhile; then the receipt says pressed. A refused
// answer drops its reservation: an operation id that pressed nothing may
// be tried again.
//
// Of the module it imports runner/dialog and runner/profile (the dialog on
// the screen), state, runner/fault and internal/textutil (TestImports).
package answer
