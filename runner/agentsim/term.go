//go:build unix

package agentsim

import (
	"fmt"

	xterm "golang.org/x/term"
)

// makeRaw puts fd into raw mode (golang.org/x/term, like cfmakeraw(3)) and
// returns the previous state, to be given back to xterm.Restore on exit.
func makeRaw(fd uintptr) (*xterm.State, error) {
	old, err := xterm.MakeRaw(int(fd))
	if err != nil {
		return nil, fmt.Errorf("set terminal to raw mode: %w", err)
	}
	return old, nil
}

// termSize returns the terminal's columns and rows, falling back to 80x24
// when the size is unknown (a pty nobody sized reports 0x0).
func termSize(fd uintptr) (cols, rows int) {
	cols, rows, err := xterm.GetSize(int(fd))
	if err != nil || cols <= 0 || rows <= 0 {
		return 80, 24
	}
	return cols, rows
}
