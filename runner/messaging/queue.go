package messaging

import (
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/state"
)

// DropQueue is what becomes of a task's queue when the task ends other
// than done: its pending messages are dropped, and messages left
// delivering by a supervisor that is gone are failed (they may or may not
// have been typed in; they are never typed again). A live supervisor
// settles its own batch.
func DropQueue(st *state.State, id string, now time.Time, reason string) []*state.Message {
	return append(st.DropPending(id, now, reason), FailStaleClaims(st, id, now, reason)...)
}

// FailStaleClaims fails the messages to task id left delivering by a
// supervisor that is gone (they may or may not have been typed in; they are
// never typed again) and returns them; why, if given, is added to the
// reason.
func FailStaleClaims(st *state.State, id string, now time.Time, why string) []*state.Message {
	var out []*state.Message
	for _, m := range st.MessagesFor(id, state.MessageDelivering) {
		if m.ClaimedBy != os.Getpid() && !proctree.Alive(m.ClaimedBy) {
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
