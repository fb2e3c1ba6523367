// runner's notices taken within a turn (package notice), settled.

package taskbook

import (
	"context"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/notice"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/state"
)

// TakenReason is a notice's delivery reason when the agent's hook took it
// within a running turn.
const TakenReason = "within a running turn, through its CLI's hook"

// SettleNotices records the notices offered to task id's running turn that
// its CLI's hook took as delivered, and withdraws every offer (package
// notice): a notice no hook took stays pending, for the next turn someone
// starts. It runs at a turn's end and before a new turn claims the queue,
// so an offer never outlives its turn.
func SettleNotices(ctx context.Context, rec record.Book, id string) {
	taken := notice.Settle(notice.Dir(rec.Store.TaskFile(state.FileHookDir, id)), rec.Store.TaskFile(state.FileEvents, id))
	if len(taken) == 0 {
		return
	}
	now := clock.Now()
	if rec.Now != nil {
		now = rec.Now()
	}
	var done []*state.Message
	err := rec.Store.UpdateIndex(context.WithoutCancel(ctx), func(st *state.State) error {
		done = done[:0]
		for mid, merged := range taken {
			// A notice merged again since it was offered is taken
			// whole with the next turn.
			if m := st.Messages[mid]; m != nil && m.To == id && m.Status == state.MessagePending && m.Merged == merged {
				m.SetMessageStatus(state.MessageDelivered, now, TakenReason)
				c := *m
				done = append(done, &c)
			}
		}
		return nil
	})
	if err != nil {
		return
	}
	for _, m := range done {
		rec.JournalMessage(ctx, now, string(state.MessageDelivered), m, TakenReason)
	}
}
