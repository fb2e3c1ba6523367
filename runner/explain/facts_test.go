package explain

import (
	"errors"
	"testing"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
)

// TestPaneFactsApply: only what was given changes what tmux said; a
// cursor row below 0 is bad input.
func TestPaneFactsApply(t *testing.T) {
	info := profile.PaneInfo{CurrentCommand: "node", CursorKnown: true, CursorY: 9}
	if err := (PaneFacts{}).Apply("x", &info); err != nil || info.CurrentCommand != "node" || info.CursorY != 9 || info.Dead {
		t.Errorf("nothing given: %+v %v", info, err)
	}
	f := PaneFacts{CurrentCommand: "less", AlternateOn: true, CursorRow: 0, CursorRowSet: true, DeadStatus: 3, DeadStatusSet: true}
	if err := f.Apply("x", &info); err != nil {
		t.Fatal(err)
	}
	if info.CurrentCommand != "less" || !info.AlternateOn || !info.CursorKnown || info.CursorY != 0 || !info.Dead || info.DeadStatus != 3 {
		t.Errorf("all given: %+v", info)
	}
	err := PaneFacts{CursorRow: -1, CursorRowSet: true}.Apply("agents detect", &info)
	if !errors.Is(err, fault.ErrUsage) || err.Error() != "agents detect: --cursor-row -1: want a row number from 0" {
		t.Errorf("bad row: %v", err)
	}
}
