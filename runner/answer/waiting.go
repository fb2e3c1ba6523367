package answer

import (
	"context"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/dialog"
	"github.com/runner-cli/runner/state"
)

// Screen is the visible text of t's pane (d.Agent), escapes stripped; ok
// is false when it cannot be read (no pane, a dead or gone one).
func Screen(ctx context.Context, d Deps, t *state.Task) (string, bool) {
	if t.Tmux.Pane == "" {
		return "", false
	}
	p, err := d.Agent.Pane(ctx, t)
	if err != nil {
		return "", false
	}
	screen, err := p.CaptureScreen(ctx, t.Tmux.Pane)
	if err != nil {
		return "", false
	}
	return textutil.StripEscapes(screen), true
}

// Waiting is the dialog a needs_input task t waits on, read off screen
// with its agent's profile (d.Agent): what runner answer answers. ok is
// false for a task that is not waiting, an agent with no profile, or a
// screen with no dialog. Its Options are never nil (an empty list in
// JSON).
func Waiting(d Deps, t *state.Task, screen string) (*dialog.Dialog, bool) {
	if t.Status != state.StatusNeedsInput {
		return nil, false
	}
	p, err := d.Agent.Profile(t)
	if err != nil {
		return nil, false
	}
	dl, ok := dialog.Read(p, screen)
	if !ok {
		return nil, false
	}
	if dl.Options == nil {
		dl.Options = []dialog.Option{}
	}
	return &dl, true
}
