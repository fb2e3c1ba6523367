// Reading the queues: a task's inbox and every task's queue depth.

package mailbox

import (
	"context"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Entry is one message in `runner inbox`.
type Entry struct {
	*state.Message
	// Direction is "in" (to the task) or "out" (from it).
	Direction string `json:"direction"`
}

// Inbox returns the messages to and from a task, oldest first. ref ""
// means the calling task (see Deps.CallerTask).
func Inbox(ctx context.Context, d Deps, ref string) (*state.Task, []Entry, error) {
	var st *state.State
	var panes []tmuxctl.PaneInfo
	var err error
	if ref == "" {
		st, panes, err = d.ReconcilePanes(ctx) // to find the caller
	} else {
		st, err = d.Reconcile(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	if ref == "" {
		if ref = d.CallerTask(ctx, st, panes); ref == "" {
			return nil, nil, fault.Usagef("give a task id (outside a runner pane there is no calling task)")
		}
	}
	t, err := st.FindTask(ref)
	if err != nil {
		return nil, nil, fault.Usagef("%v (see 'runner ps --all')", err)
	}
	msgs, err := InboxOf(st, t.ID)
	return t, msgs, err
}

// InboxOf lists the messages to and from task id in st, the archived ones
// too, oldest first.
func InboxOf(st *state.State, id string) ([]Entry, error) {
	hist, err := st.MessageHistory(id)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, m := range hist {
		dir := "in"
		if m.From == id {
			dir = "out"
		}
		out = append(out, Entry{Message: m, Direction: dir})
	}
	return out, nil
}

// QueueEntry is one task's queue in `runner queue`.
type QueueEntry struct {
	Task    string       `json:"task"`
	Project string       `json:"project,omitempty"`
	Status  state.Status `json:"status"`
	Pending int          `json:"pending"`
	// Delivering counts messages being typed in now.
	Delivering int `json:"delivering"`
	// Oldest is when the oldest pending message was sent.
	Oldest time.Time `json:"oldest,omitzero"`
	// OldestAgeMS is the age of the oldest pending message, in ms.
	OldestAgeMS int64 `json:"oldest_age_ms"`
}

// Queues returns, for each task with pending or delivering messages, the
// queue depth and the oldest pending message's age, oldest first.
func Queues(ctx context.Context, d Deps) ([]QueueEntry, error) {
	st, err := d.Reconcile(ctx)
	if err != nil {
		return nil, err
	}
	now := d.Now()
	byTask := map[string]*QueueEntry{}
	var order []string
	for _, m := range st.MessageList() {
		if m.Status != state.MessagePending && m.Status != state.MessageDelivering {
			continue
		}
		q := byTask[m.To]
		if q == nil {
			q = &QueueEntry{Task: m.To}
			if t := st.Task(m.To); t != nil {
				q.Project, q.Status = t.Project, t.Status
			}
			byTask[m.To] = q
			order = append(order, m.To)
		}
		if m.Status == state.MessageDelivering {
			q.Delivering++
			continue
		}
		q.Pending++
		if q.Oldest.IsZero() || m.Created.Before(q.Oldest) {
			q.Oldest = m.Created
			q.OldestAgeMS = now.Sub(m.Created).Milliseconds()
		}
	}
	out := make([]QueueEntry, 0, len(order))
	for _, id := range order {
		out = append(out, *byTask[id])
	}
	return out, nil
}
