package tmuxctl

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WritePanes writes panes as runner tmux list prints them: a table of
// id, session, window, command, state (running with its pid, dead with
// its status, in copy mode) and size.
func WritePanes(w io.Writer, panes []PaneInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PANE\tSESSION\tWINDOW\tCOMMAND\tSTATE\tSIZE")
	for _, p := range panes {
		state := fmt.Sprintf("running (pid %d)", p.PID)
		if p.Dead {
			state = fmt.Sprintf("dead (status %d)", p.DeadStatus)
		} else if p.InMode {
			state += ", copy mode"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d:%s\t%s\t%s\t%dx%d\n", p.ID, p.Session, p.WindowIndex, p.WindowName, p.CurrentCommand, state, p.Width, p.Height)
	}
	return tw.Flush()
}
