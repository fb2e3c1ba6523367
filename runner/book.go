package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// taskBook is a task's record in the state, as a supervisor.Book: what the
// supervisor reads and writes through while it drives the task's turns.
type taskBook struct {
	env  *Env
	id   string
	prof *profile.Profile
	set  RunSettings
}

func (b *taskBook) Task(ctx context.Context) (*state.Task, error) { return b.env.task(ctx, b.id) }

func (b *taskBook) Update(ctx context.Context, fn func(*state.Task)) error {
	return b.env.update(ctx, b.id, fn)
}

func (b *taskBook) SetStatus(ctx context.Context, st state.Status, reason string, fn func(*state.Task)) error {
	return b.env.setStatus(ctx, b.id, st, reason, fn)
}

func (b *taskBook) Journal(ctx context.Context, kind, text string) {
	if t, err := b.env.task(ctx, b.id); err == nil {
		b.env.journal(ctx, t, kind, text)
	}
}

func (b *taskBook) Say(format string, args ...any) { b.env.say(format, args...) }

func (b *taskBook) Notify(ctx context.Context, t *state.Task) { b.env.notify(ctx, t, b.set) }

func (b *taskBook) Now() time.Time { return b.env.now() }

// Prompt puts the awareness block (what the other tasks are doing) ahead
// of a first turn's text, unless the task's settings or its agent's
// profile turn it off.
func (b *taskBook) Prompt(ctx context.Context, text string, first bool) (string, *state.Task, error) {
	st, err := b.env.Store.Read(ctx)
	if err != nil {
		return "", nil, err
	}
	t := st.Task(b.id)
	if t == nil {
		return "", nil, fmt.Errorf("task %s: %w", b.id, state.ErrTaskNotFound)
	}
	payload := text
	if first && b.set.Awareness != messaging.AwarenessOff && !b.prof.NoAwareness {
		if block := messaging.RenderAwareness(st, t, messaging.AwarenessOptions{Mode: b.set.Awareness, MaxChars: b.set.AwarenessMax, Now: b.env.now()}); block != "" {
			payload = block + "\n" + text
		}
	}
	return payload, t, nil
}

func (b *taskBook) Pending(ctx context.Context) int {
	st, err := b.env.Store.Read(ctx)
	if err != nil {
		return 0
	}
	return len(st.MessagesFor(b.id, state.MessagePending))
}
