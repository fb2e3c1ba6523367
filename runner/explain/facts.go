package explain

import (
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
)

// PaneFacts are what a user says tmux would say of a captured screen's
// pane besides its text (the pane flags of agents detect and agents
// explain); CursorRowSet and DeadStatusSet say those two were given.
type PaneFacts struct {
	CurrentCommand string
	AlternateOn    bool
	CursorRow      int
	DeadStatus     int
	CursorRowSet   bool
	DeadStatusSet  bool
}

// Apply sets on info what f gives, over what tmux said; cmdName names
// the command in errors (a negative cursor row is a usage error).
func (f PaneFacts) Apply(cmdName string, info *profile.PaneInfo) error {
	if f.CurrentCommand != "" {
		info.CurrentCommand = f.CurrentCommand
	}
	if f.AlternateOn {
		info.AlternateOn = true
	}
	if f.CursorRowSet {
		if f.CursorRow < 0 {
			return fault.Usagef("%s: --cursor-row %d: want a row number from 0", cmdName, f.CursorRow)
		}
		info.CursorKnown, info.CursorY = true, f.CursorRow
	}
	if f.DeadStatusSet {
		info.Dead, info.DeadStatus = true, f.DeadStatus
	}
	return nil
}
