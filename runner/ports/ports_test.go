package ports

import (
	"net"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/state"
)

// TestPortInUse: a port a listener holds, on the loopback address alone,
// is in use for the probe on every address.
func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	if !inUse(p) {
		t.Errorf("port %d has a listener, not seen", p)
	}
	l.Close()
	if inUse(p) {
		t.Errorf("port %d is free again, seen in use", p)
	}
}

// TestPortInUseAsListen: the probe says what net.Listen on every address
// says, for a port held on the loopback address of either family and a
// free one.
func TestPortInUseAsListen(t *testing.T) {
	var held []int
	for _, network := range []string{"tcp4", "tcp6"} {
		l, err := net.Listen(network, "localhost:0")
		if err != nil {
			t.Logf("%s: %v", network, err)
			continue
		}
		defer l.Close()
		held = append(held, l.Addr().(*net.TCPAddr).Port)
	}
	free, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	p := free.Addr().(*net.TCPAddr).Port
	free.Close()
	for _, port := range append(held, p) {
		if got, want := inUse(port), listenFails(port); got != want {
			t.Errorf("port %d: inUse %v, net.Listen fails %v", port, got, want)
		}
	}
}

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
	importcheck.Only(t, ".", "runner/config", "state")
}
