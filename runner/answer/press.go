package answer

import (
	"context"
	"fmt"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/dialog"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// press checks the dialog on t's screen against r and presses r's option
// (see the package doc); it returns the option's label. An error that is
// ErrStale, fault.ErrUsage or errNothingPressed pressed no Enter and no
// key of an option.
func press(ctx context.Context, d Deps, t *state.Task, r Request) (string, error) {
	p, err := d.Agent.Profile(t)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errNothingPressed, err)
	}
	pane, err := d.Agent.Pane(ctx, t)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errNothingPressed, err)
	}
	g := guard{pane: pane, id: t.Tmux.Pane, task: t.ID, p: p, digest: r.Digest}
	dlg, screen, err := g.read(ctx)
	if err != nil {
		return "", err
	}
	o, ok := dlg.Option(r.Option)
	if !ok {
		return "", fault.Usagef("task %s: the dialog has no option %q (%s): nothing pressed", t.ID, r.Option, optionList(dlg))
	}
	if dlg.Keyed {
		// No menu: the option's key (then Enter, if the profile says so),
		// right after the screen was read and its digest checked.
		keys := []string{o.Key}
		if p.KeyOptionsEnter {
			keys = append(keys, "Enter")
		}
		if err := pane.SendKeys(ctx, g.id, keys...); err != nil {
			return o.Label, fmt.Errorf("%w: %w", errNothingPressed, err)
		}
		return o.Label, g.leave(ctx)
	}
	if p.MenuCursor == "" {
		// No cursor to move: the option's key alone, as the CLIs' menus
		// take it.
		if err := pane.SendKeys(ctx, g.id, o.Key); err != nil {
			return o.Label, fmt.Errorf("%w: %w", errNothingPressed, err)
		}
		return o.Label, g.leave(ctx)
	}
	for range moveRounds {
		moves, ok := profile.MenuMove(p, screen, labelPattern(o))
		if !ok {
			return o.Label, fmt.Errorf("task %s: the option %s %q or the menu's cursor is not where the profile looks: nothing pressed (answer it with 'runner attach %s'): %w", t.ID, o.Key, o.Label, t.ID, errNothingPressed)
		}
		if moves == 0 {
			// screen was read and checked just now: Enter.
			if err := pane.SendKeys(ctx, g.id, "Enter"); err != nil {
				return o.Label, err
			}
			return o.Label, g.leave(ctx)
		}
		key := "Down"
		if moves < 0 {
			key, moves = "Up", -moves
		}
		keys := make([]string, moves)
		for i := range keys {
			keys[i] = key
		}
		if err := pane.SendKeys(ctx, g.id, keys...); err != nil {
			return o.Label, fmt.Errorf("%w: %w", errNothingPressed, err)
		}
		g.redrawn(ctx, screen)
		if _, screen, err = g.read(ctx); err != nil {
			return o.Label, err
		}
	}
	return o.Label, fmt.Errorf("task %s: the menu's cursor did not reach the option %s %q after %d tries: nothing pressed (answer it with 'runner attach %s'): %w", t.ID, o.Key, o.Label, moveRounds, t.ID, errNothingPressed)
}

// guard reads the task's pane and holds it to the digest.
type guard struct {
	pane   Pane
	id     string // the pane's id
	task   string
	p      *profile.Profile
	digest string
}

// read captures the screen and reads its dialog: ErrStale when there is
// none or its digest is not g's.
func (g guard) read(ctx context.Context) (dialog.Dialog, string, error) {
	screen, err := g.pane.CaptureScreen(ctx, g.id)
	if err != nil {
		return dialog.Dialog{}, "", fmt.Errorf("%w: %w", errNothingPressed, err)
	}
	dlg, ok := dialog.Read(g.p, screen)
	switch {
	case !ok:
		return dlg, screen, stale("task %s: its screen shows no dialog now: nothing pressed", g.task)
	case dlg.Digest != g.digest:
		return dlg, screen, stale("task %s: the dialog changed (digest %s now, not %s): nothing pressed", g.task, dlg.Digest, g.digest)
	}
	return dlg, screen, nil
}

// redrawn waits (at most 2 s) for the screen to differ from before.
func (g guard) redrawn(ctx context.Context, before string) {
	for deadline := clock.Now().Add(2 * time.Second); clock.Now().Before(deadline); {
		if now, err := g.pane.CaptureScreen(ctx, g.id); err != nil || now != before {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
	}
}

// leave waits (at most LeaveWait) for the dialog answered to leave the
// screen: no dialog, or another digest. One still there then is no error:
// the keys went.
func (g guard) leave(ctx context.Context) error {
	for deadline := clock.Now().Add(LeaveWait); clock.Now().Before(deadline); {
		screen, err := g.pane.CaptureScreen(ctx, g.id)
		if err != nil {
			return nil // the pane went with its dialog
		}
		if dlg, ok := dialog.Read(g.p, screen); !ok || dlg.Digest != g.digest {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
	return nil
}

func optionList(d dialog.Dialog) string {
	if len(d.Options) == 0 {
		return "it shows no options runner can read: answer it with 'runner attach' or 'runner send' (docs/unattended.md)"
	}
	s := "its options: "
	for i, o := range d.Options {
		if i > 0 {
			s += ", "
		}
		s += o.Key + " " + fmt.Sprintf("%q", o.Label)
	}
	return s
}
