package tmuxctl

import (
	"strings"
	"testing"
)

// TestWritePanes: a header and a row a pane, each state as it reads.
func TestWritePanes(t *testing.T) {
	var b strings.Builder
	err := WritePanes(&b, []PaneInfo{
		{ID: "%1", Session: "api", WindowIndex: 0, WindowName: "t_a", CurrentCommand: "claude", PID: 42, Width: 120, Height: 40},
		{ID: "%2", Session: "api", WindowIndex: 1, WindowName: "t_b", CurrentCommand: "bash", Dead: true, DeadStatus: 3, Width: 80, Height: 24},
		{ID: "%3", Session: "x", WindowIndex: 2, WindowName: "w", CurrentCommand: "less", PID: 7, InMode: true, Width: 80, Height: 24},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `PANE  SESSION  WINDOW  COMMAND  STATE                       SIZE
%1    api      0:t_a   claude   running (pid 42)            120x40
%2    api      1:t_b   bash     dead (status 3)             80x24
%3    x        2:w     less     running (pid 7), copy mode  80x24
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
