package tasks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/runner-cli/runner/state"
)

// TaskGetter reads a task again (runner.GetTask: reconciled first).
type TaskGetter interface {
	GetTask(ctx context.Context, ref string) (*state.Task, error)
}

// logPoll is how often a followed log is read again.
const logPoll = 250 * time.Millisecond

// CopyLog hands t's transcript to emit as it is read, a chunk at a time
// (last set on the chunk read after the task ended). With follow, it
// reads on until the task ends or is orphaned (g says), or ctx ends;
// without, it reads once. A transcript not written yet is empty.
func CopyLog(ctx context.Context, g TaskGetter, t *state.Task, follow bool, emit func(b []byte, last bool)) error {
	var off int64
	for {
		b, err := readFrom(t.Transcript, off)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("logs %s: %w", t.ID, err)
		}
		off += int64(len(b))
		emit(b, false)
		if !follow {
			return nil
		}
		if t, err = g.GetTask(ctx, t.ID); err != nil {
			return err
		}
		if t.Status.IsTerminal() || t.Status == state.StatusOrphaned {
			b, _ := readFrom(t.Transcript, off)
			emit(b, true)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(logPoll):
		}
	}
}

// readFrom reads path from offset off to its end.
func readFrom(path string, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}
