package snapshots

import (
	"context"
	"errors"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
)

// CommitWait bounds Committing's wait for the commit of a task's snapshot.
const CommitWait = 5 * time.Second

// Committing looks again (look), every 20 ms and for CommitWait at most,
// while the snapshot is not found (err, then look's, is
// gitsnap.ErrNotFound) and it is the snapshot of a task at work (atWork):
// a foreground task's record names its snapshot from its start, and the
// snapshot's commit is written beside its first turn, before any end is
// recorded (launch.Started.Committed). A task that ended has its snapshot
// committed: its err is returned at once. It returns look's last error.
func Committing(ctx context.Context, err error, atWork bool, look func() error) error {
	for until := clock.Now().Add(CommitWait); atWork && errors.Is(err, gitsnap.ErrNotFound) && clock.Now().Before(until); {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		err = look()
	}
	return err
}
