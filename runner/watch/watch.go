package watch

import (
	"context"
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// frameRate is the renderer's frames per second. bubbletea v2 parses
// the whole view on every frame, changed or not, so frames are what an
// idle view costs (30 fps: ~0.45 CPU-s per minute for 50 tasks at
// 160x48); 15 keeps a change on screen within ~70 ms of its state write
// (20 ms of fsnotify debounce, the read, at most one frame).
const frameRate = 15

// Run shows the view on the terminal (stdin, stdout) until the user
// quits with q or ctx ends; the terminal is restored either way.
func Run(ctx context.Context, opts Options) error {
	m, err := New(ctx, opts)
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithFPS(frameRate))
	if _, err := p.Run(); err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("watch: %w", err)
	}
	return nil
}
