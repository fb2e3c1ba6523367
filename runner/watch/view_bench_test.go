package watch

import (
	"fmt"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// BenchmarkView renders the 160x48 screen of 50 finished tasks: what a
// clock tick costs.
func BenchmarkView(b *testing.B) {
	now := clock.Now()
	st := &state.State{Tasks: map[string]*state.Task{}}
	for i := range 50 {
		id := fmt.Sprintf("t_%08d", i)
		at := now.Add(-time.Duration(i) * time.Minute)
		st.Tasks[id] = &state.Task{ID: id, Project: "bench", Dir: "/src/bench", Agent: "sim", Text: fmt.Sprintf("write f%d.txt x", i),
			Status: state.StatusDone, Created: at, Ended: at, History: []state.StatusChange{{Status: state.StatusDone, Time: at}},
			Turns: []state.Turn{{Time: at, Summary: fmt.Sprintf("Wrote f%d.txt", i)}}}
	}
	m := &Model{st: st, w: 160, h: 48, now: now, loaded: true, marked: map[string]bool{}, asked: map[string]bool{}}
	m.rebuild()
	m.preview, m.previewID = "> write f1.txt x\nWrote f1.txt\n\n\x1b[1m╭────╮\x1b[0m\n│ > │\n╰────╯", m.sel
	for b.Loop() {
		_ = m.render()
	}
}
