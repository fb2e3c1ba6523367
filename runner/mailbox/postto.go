package mailbox

import (
	"context"

	"github.com/runner-cli/runner/state"
)

// PostTo makes the function that posts one message to a task through d,
// held to the limits (MaxHops, MaxPerRoot) of limits: what runner ask
// sends its questions and FYIs with (ask.PostFunc).
func PostTo(d Deps, limits Request) func(ctx context.Context, to *state.Task, typ, text string) error {
	return func(ctx context.Context, to *state.Task, typ, text string) error {
		req := limits
		req.To, req.Text, req.Type = to.ID, text, state.MessageType(typ)
		_, err := Post(ctx, d, req)
		return err
	}
}
