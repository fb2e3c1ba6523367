package state

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestAllocatePorts: two live tasks of one machine never share a port; an
// ended task's range is given again; another machine's tasks do not count;
// a port in use skips its range.
func TestAllocatePorts(t *testing.T) {
	st := New()
	add := func(id, host string, status Status) *Task {
		task := &Task{ID: id, Status: status, Tmux: TmuxTarget{Host: host}}
		if err := st.AllocatePorts(task, 20000, 10, nil); err != nil {
			t.Fatal(err)
		}
		st.Tasks[id] = task
		return task
	}
	a := add("t_a", "", StatusRunning)
	b := add("t_b", "", StatusQueued)
	if a.Ports != (PortRange{20000, 10}) || b.Ports != (PortRange{20010, 10}) {
		t.Fatalf("a %v, b %v", a.Ports, b.Ports)
	}
	if c := add("t_c", "box", StatusRunning); c.Ports.First != 20000 {
		t.Errorf("a host's first task: %v, want 20000 (ports are per machine)", c.Ports)
	}
	o := add("t_o", "", StatusOrphaned) // resumable: it keeps its range
	if o.Ports.First != 20020 {
		t.Errorf("orphaned: %v", o.Ports)
	}
	a.Status = StatusDone
	if d := add("t_d", "", StatusStarting); d.Ports.First != 20000 {
		t.Errorf("after a ended: %v, want its range 20000", d.Ports)
	}
	busy := func(p int) bool { return p == 20035 }
	e := &Task{ID: "t_e"}
	if err := st.AllocatePorts(e, 20000, 10, busy); err != nil || e.Ports.First != 20040 {
		t.Errorf("a port in use: %v %v, want 20040", e.Ports, err)
	}
	// a base not aligned with the ranges held still never overlaps them
	f := &Task{ID: "t_f"}
	if err := st.AllocatePorts(f, 20005, 4, nil); err != nil || f.Ports.First != 20033 {
		t.Errorf("unaligned: %v %v, want 20033", f.Ports, err)
	}
	for _, bad := range [][2]int{{0, 10}, {20000, 0}, {65530, 10}} {
		if err := st.AllocatePorts(&Task{ID: "t_x"}, bad[0], bad[1], nil); !errors.Is(err, ErrNoPorts) {
			t.Errorf("base %d count %d: %v", bad[0], bad[1], err)
		}
	}
	all := func(int) bool { return true }
	if err := st.AllocatePorts(&Task{ID: "t_x"}, 65500, 10, all); !errors.Is(err, ErrNoPorts) {
		t.Errorf("all busy: %v", err)
	}
}

// TestPortsKeptInTheIndex: the range is a hot field, read back from
// state.json.
func TestPortsKeptInTheIndex(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	err := s.Update(ctx, func(st *State) error {
		task := &Task{ID: "t_p0000000", Agent: "sim", Status: StatusRunning}
		st.Tasks[task.ID] = task
		return st.AllocatePorts(task, 30000, 5, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(s.Path())
	if err != nil || !strings.Contains(string(raw), `"pt":[30000,5]`) {
		t.Errorf("state.json: %s %v", raw, err)
	}
	task, err := s.ReadTask(ctx, "t_p0000000")
	if err != nil || task.Ports != (PortRange{30000, 5}) {
		t.Errorf("ports read back: %v %v", task, err)
	}
}
