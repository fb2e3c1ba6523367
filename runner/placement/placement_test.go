package placement

import (
	"testing"
	"time"

	"github.com/runner-cli/runner/state"
)

func TestAheadIsFirstComeFirstServedWithinAPool(t *testing.T) {
	at := time.Unix(1000, 0)
	task := func(id string, sec int, pool, host string, st state.Status) *state.Task {
		return &state.Task{ID: id, Created: at.Add(time.Duration(sec) * time.Second), Status: st, Tmux: state.TmuxTarget{Pool: pool, Host: host}}
	}
	st := &state.State{Tasks: map[string]*state.Task{
		"a": task("a", 1, "any", "", state.StatusQueued),
		"b": task("b", 2, "any", "", state.StatusQueued),
		"c": task("c", 2, "any", "", state.StatusQueued),     // same time as b: by id
		"d": task("d", 0, "label:x", "", state.StatusQueued), // another pool
		"e": task("e", 0, "any", "h1", state.StatusQueued),   // placed already
		"f": task("f", 0, "any", "", state.StatusCancelled),  // no longer waiting
		"g": task("g", 3, "any", "", state.StatusQueued),
	}}
	for id, want := range map[string]int{"a": 0, "b": 1, "c": 2, "g": 3, "d": 0} {
		if got := Ahead(st, st.Tasks[id]); got != want {
			t.Errorf("Ahead(%s) = %d, want %d", id, got, want)
		}
	}
}
