package ports

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/state"
)

// TestPortsOfTasks: a range with a listener is passed over here, not on a
// host (nothing is probed there); a task started again keeps its range
// unless another live task holds it now.
func TestPortsOfTasks(t *testing.T) {
	defer func(f func(int) bool) { inUse = f }(inUse)
	inUse = func(p int) bool { return p == 20003 }
	st := state.New()
	here := &state.Task{ID: "t_here", Status: state.StatusRunning}
	if err := Allocate(st, here, config.Ports{}); err != nil || here.Ports != (state.PortRange{First: 20010, Count: 10}) {
		t.Errorf("here: %v %v, want 20010 (20003 is in use)", here.Ports, err)
	}
	there := &state.Task{ID: "t_there", Status: state.StatusRunning, Tmux: state.TmuxTarget{Host: "box"}}
	if err := Allocate(st, there, config.Ports{Base: 30000, Count: 4}); err != nil || there.Ports.First != 30000 {
		t.Errorf("there: %v %v, want 30000", there.Ports, err)
	}
	st.Tasks[here.ID] = here
	ended := &state.Task{ID: "t_ended", Status: state.StatusDone, Ports: state.PortRange{First: 20020, Count: 10}}
	st.Tasks[ended.ID] = ended
	if err := Keep(st, ended); err != nil || ended.Ports.First != 20020 {
		t.Errorf("kept: %v %v", ended.Ports, err)
	}
	ended.Ports.First = 20010 // as if another task got its range meanwhile
	if err := Keep(st, ended); err != nil || ended.Ports.First != 20020 {
		t.Errorf("moved: %v %v, want the next free range, 20020", ended.Ports, err)
	}
}

// TestImports: the config's defaults and the state, nothing else of runner.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/portprobe", "runner/config", "state")
}
