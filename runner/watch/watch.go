package watch

import (
	"context"
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// Run shows the view on the terminal (stdin, stdout) until the user
// quits with q or ctx ends; the terminal is restored either way.
func Run(ctx context.Context, opts Options) error {
	m, err := New(ctx, opts)
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithFPS(30))
	if _, err := p.Run(); err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("watch: %w", err)
	}
	return nil
}
