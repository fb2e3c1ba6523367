package mailbox

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/state"
)

// WriteOutcomes writes a post's outcomes as runner msg prints them, one
// line a recipient, but for the refused ones (its error names them).
func WriteOutcomes(w io.Writer, outs []Outcome) {
	for _, o := range outs {
		if o.Result == MsgRefused {
			continue
		}
		fmt.Fprintf(w, "%s → %s: %s (%s)\n", o.ID, o.To, o.Result, o.Reason)
	}
}

// WriteInbox writes task id's messages as runner inbox prints them, a
// line each: id, direction and the other task, type, status, hops, age
// at now and the first line (and the reason of a message no longer
// pending).
func WriteInbox(w io.Writer, id string, entries []Entry, now time.Time) {
	if len(entries) == 0 {
		fmt.Fprintf(w, "no messages to or from %s\n", id)
		return
	}
	for _, e := range entries {
		peer, arrow := e.From, "←"
		if e.Direction == "out" {
			peer, arrow = e.To, "→"
		}
		line := fmt.Sprintf("%s  %s %s  %s  %s  hop %d  %s ago  %s", e.ID, arrow, peer, e.Type, e.Status,
			e.Hops, textutil.Age(now, e.Created), textutil.VisibleLine(textutil.Headline(e.Text, 60)))
		if e.Reason != "" && e.Status != state.MessagePending {
			line += "  (" + e.Reason + ")"
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

// WriteQueues writes the queues as runner queue prints them: a line a
// task with its depth, what is being delivered, and the age of the
// oldest pending message.
func WriteQueues(w io.Writer, qs []QueueEntry) {
	if len(qs) == 0 {
		fmt.Fprintln(w, "no messages waiting")
		return
	}
	for _, q := range qs {
		fmt.Fprintf(w, "%s  %-11s  %d pending", q.Task, q.Status, q.Pending)
		if q.Delivering > 0 {
			fmt.Fprintf(w, ", %d delivering", q.Delivering)
		}
		if q.Pending > 0 {
			fmt.Fprintf(w, "  oldest %s", (time.Duration(q.OldestAgeMS) * time.Millisecond).Round(time.Second))
		}
		fmt.Fprintln(w)
	}
}
