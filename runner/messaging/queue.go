package messaging

import (
	"fmt"
	"time"

	"github.com/runner-cli/runner/state"
)

// DropQueue is what becomes of a task's queue when the task ends other
// than done: its pending messages are dropped, and messages left
// delivering by a supervisor that is gone are failed (they may or may not
// have been typed in; they are never typed again). A live supervisor
// settles its own batch.
func DropQueue(st *state.State, id string, now time.Time, reason string, procs Procs) []*state.Message {
	return append(st.DropPending(id, now, reason), FailStaleClaims(st, id, now, reason, procs)...)
}

// FailStaleClaims fails the messages to task id left delivering by a
// supervisor that is gone (they may or may not have been typed in; they are
// never typed again) and returns them; why, if given, is added to the
// reason.
func FailStaleClaims(st *state.State, id string, now time.Time, why string, procs Procs) []*state.Message {
	var out []*state.Message
	self, _ := procs.Self()
	for _, m := range st.MessagesFor(id, state.MessageDelivering) {
		if m.ClaimedBy != self && !procs.Alive(m.ClaimedBy, "") {
			reason := fmt.Sprintf("its delivery by supervisor %d was interrupted", m.ClaimedBy)
			if why != "" {
				reason += " and " + why
			}
			m.SetMessageStatus(state.MessageFailed, now, reason)
			out = append(out, m)
		}
	}
	return out
}

// Procs is what messaging knows of processes: this one (the supervisor
// that claims a delivery or a task), and whether another still runs (a
// claim or a task whose supervisor died is taken over). The runner
// package passes the real ones; tests pass a fake.
type Procs interface {
	// Self is this process's pid and identity (see proctree.Identity).
	Self() (pid int, ident string)
	// Alive reports whether pid runs as the process ident names ("" for
	// any).
	Alive(pid int, ident string) bool
}
