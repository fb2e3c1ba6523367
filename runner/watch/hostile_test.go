package watch

import (
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// TestViewShowsNoAgentEscapes: a task text, a question, a summary and an
// answer holding terminal escapes (clipboard write, title, clear screen)
// are drawn with the escapes made visible: the only ESC on screen is the
// view's own styling (CSI … m).
func TestViewShowsNoAgentEscapes(t *testing.T) {
	now := clock.Now()
	evil := "\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[2J\u009b2J"
	st := &state.State{Tasks: map[string]*state.Task{
		"t_a": {ID: "t_a", Project: "p", Agent: "sim", Text: "task " + evil, Status: state.StatusNeedsInput, Question: "asks " + evil,
			Created: now, History: []state.StatusChange{{Status: state.StatusNeedsInput, Time: now, Reason: "why " + evil}}},
		"t_b": {ID: "t_b", Project: "p", Agent: "sim", Text: "other " + evil, Status: state.StatusDone, Answer: "answer " + evil,
			Created: now, Ended: now, History: []state.StatusChange{{Status: state.StatusDone, Time: now, Reason: "done " + evil}},
			Turns: []state.Turn{{Time: now, Summary: "summary " + evil}}},
	}}
	for _, sel := range []string{"t_a", "t_b"} {
		m := &Model{st: st, w: 160, h: 30, now: now, loaded: true, marked: map[string]bool{}, asked: map[string]bool{}}
		m.rebuild()
		m.sel = sel
		m.status = "sent " + evil
		screen := m.render()
		for _, bad := range []string{"\x1b]", "\x1b[2J", "\x07", "\u009b"} {
			if strings.Contains(screen, bad) {
				t.Errorf("selected %s: the screen holds %q:\n%q", sel, bad, screen)
			}
		}
		if !strings.Contains(screen, "^[]52;c;") {
			t.Errorf("selected %s: the escape is not shown made visible:\n%s", sel, screen)
		}
	}
}
