package gc

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/state"
)

// fakeProc is one process of a fakeProcs.
type fakeProc struct {
	ppid, sid int
	comm      string
	env       map[string]string
}

// fakeProcs is a ProcTable in memory, by pid, read as proctree.Table reads
// the system's: descendants never through a tmux server, a session only
// while its leader leads it.
type fakeProcs map[int]fakeProc

func (f fakeProcs) PIDs() []int {
	var out []int
	for pid := range f {
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

func (f fakeProcs) Env(pid int, key string) (string, bool) {
	v, ok := f[pid].env[key]
	return v, ok
}

func (f fakeProcs) Descendants(roots ...int) []int {
	var out []int
	seen := map[int]bool{}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if p, ok := f[pid]; seen[pid] || !ok || p.comm == proctree.TmuxServerComm {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		for _, c := range f.PIDs() {
			if f[c].ppid == pid {
				queue = append(queue, c)
			}
		}
	}
	return out
}

func (f fakeProcs) Session(sid int) []int {
	if l, ok := f[sid]; !ok || l.sid != sid {
		return nil
	}
	var out []int
	for _, pid := range f.PIDs() {
		if f[pid].sid == sid {
			out = append(out, pid)
		}
	}
	return out
}

func (f fakeProcs) TmuxServerOf(pid int) int {
	for p, ok := f[pid]; ok && p.ppid > 0; p, ok = f[p.ppid] {
		if f[p.ppid].comm == proctree.TmuxServerComm {
			return p.ppid
		}
	}
	return 0
}

var _ ProcTable = fakeProcs{}
var _ ProcTable = table{}

// marked is the environment of a process of task id under state
// directory dir.
func marked(id, dir string) map[string]string {
	return map[string]string{"RUNNER_TASK_ID": id, "RUNNER_STATE_DIR": dir}
}

const (
	doneA = "t_aaaa0001" // the target: done
	liveB = "t_bbbb0002" // active, its pane protected
	goneC = "t_cccc0003" // a task the state no longer has
)

// sampleProcs is a machine where runner's tmux server (100, started from
// a task's pane, so with its variables) runs the panes of doneA (200) and
// liveB (300), and the tasks left processes about.
func sampleProcs() fakeProcs {
	a, b := marked(doneA, "/st"), marked(liveB, "/st")
	return fakeProcs{
		1:   {comm: "init", sid: 1},
		100: {ppid: 1, sid: 100, comm: proctree.TmuxServerComm, env: a},
		200: {ppid: 100, sid: 200, comm: "bash", env: a},          // doneA's pane
		201: {ppid: 200, sid: 200, comm: "node", env: a},          // its agent
		202: {ppid: 201, sid: 200, comm: "rg"},                    // below it, env scrubbed
		203: {ppid: 201, sid: 203, comm: proctree.TmuxServerComm}, // a server the agent started
		204: {ppid: 203, sid: 204, comm: "sh", env: a},            // a pane of that server
		210: {ppid: 1, sid: 200, comm: "node"},                    // double-forked, kept the session
		220: {ppid: 1, sid: 220, comm: "codex", env: a},           // a daemon that left the tree
		221: {ppid: 220, sid: 220, comm: "mcp"},                   // below the daemon
		300: {ppid: 100, sid: 300, comm: "bash", env: b},          // liveB's pane
		301: {ppid: 300, sid: 300, comm: "node", env: b},
		302: {ppid: 301, sid: 300, comm: "sh", env: a}, // marked doneA, below a protected pane
		500: {ppid: 1, sid: 500, comm: "node", env: marked(goneC, "/st")},
		501: {ppid: 1, sid: 501, comm: "node", env: marked("not-an-id", "/st")},
		600: {ppid: 1, sid: 600, comm: "node", env: marked(doneA, "/other")}, // another state's
	}
}

// TestPick: which processes a gc ends, from a table and the state read
// after it.
func TestPick(t *testing.T) {
	done := map[string]*state.Task{doneA: {ID: doneA, Status: state.StatusDone}, liveB: {ID: liveB, Status: state.StatusRunning}}
	again := map[string]*state.Task{doneA: {ID: doneA, Status: state.StatusRunning}, liveB: done[liveB]}
	base := picking{dir: "/st", server: 100, targets: []pickTarget{{id: doneA, panePID: 200}}, protect: []int{300}}
	with := func(fn func(*picking)) picking { p := base; fn(&p); return p }
	for _, c := range []struct {
		name  string
		p     picking
		known map[string]*state.Task
		want  []int
	}{
		{"the pane's tree, its session, the marked daemon and its children; never a server, a protected pane or another state's",
			base, done, []int{200, 201, 202, 210, 220, 221}},
		{"pruned: also a task the state lost (by a valid id only)",
			with(func(p *picking) { p.pruned = true }), done, []int{200, 201, 202, 210, 220, 221, 500}},
		{"the target active again: nothing of it",
			base, again, nil},
		{"active again, pruned: the lost task's only",
			with(func(p *picking) { p.pruned = true }), again, []int{500}},
		{"no live pane: the marked ones and what runs below them",
			with(func(p *picking) { p.targets = []pickTarget{{id: doneA}} }), done, []int{200, 201, 202, 220, 221}},
		{"the pane's pid is another task's now: its tree is not taken",
			with(func(p *picking) { p.targets = []pickTarget{{id: doneA, panePID: 300}}; p.protect = nil }), done, []int{200, 201, 202, 220, 221, 302}},
		{"nothing protected: a marked process below another's pane is taken",
			with(func(p *picking) { p.protect = nil }), done, []int{200, 201, 202, 210, 220, 221, 302}},
		{"runner's server is another (203): 100's panes' variables are not the task's, 203's are; 100 is no longer spared (proctree.Endable spares every server)",
			with(func(p *picking) { p.server = 203 }), done, []int{100, 200, 201, 202, 204, 210, 220, 221}},
		{"no target",
			with(func(p *picking) { p.targets = nil }), done, nil},
	} {
		owner := map[int]string{}
		got := c.p.pick(sampleProcs(), c.known, owner)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n pick = %v\n want   %v", c.name, got, c.want)
		}
		for _, pid := range got {
			if want := doneA; pid == 500 {
				want = goneC
				if owner[pid] != want {
					t.Errorf("%s: owner of %d = %q, want %q", c.name, pid, owner[pid], want)
				}
			} else if owner[pid] != want {
				t.Errorf("%s: owner of %d = %q, want %q", c.name, pid, owner[pid], want)
			}
		}
		if len(owner) != len(got) {
			t.Errorf("%s: owner %v has more than the pids picked", c.name, owner)
		}
	}
}

// TestPickKeepsEarlierOwners: proctree.End calls the picker again until
// nothing new turns up; a process found before and gone since keeps its
// task in owner (its end is still attributed) and is picked again
// (proctree.Endable drops what the table lacks).
func TestPickKeepsEarlierOwners(t *testing.T) {
	p := picking{dir: "/st", server: 100, targets: []pickTarget{{id: doneA, panePID: 200}}, protect: []int{300}}
	known := map[string]*state.Task{doneA: {ID: doneA, Status: state.StatusDone}}
	owner := map[int]string{}
	procs := sampleProcs()
	first := p.pick(procs, known, owner)
	delete(procs, 202)
	procs[230] = fakeProc{ppid: 221, sid: 220, comm: "sh"} // forked meanwhile
	got := p.pick(procs, known, owner)
	if want := append(first, 230); !slices.Equal(got, want) || owner[202] != doneA || owner[230] != doneA {
		t.Errorf("second pick = %v, owner[202] = %q, owner[230] = %q; want %v, both doneA's", got, owner[202], owner[230], want)
	}
}

// TestTableOverProctree: the real table lists this process.
func TestTableOverProctree(t *testing.T) {
	tab, err := proctree.Read()
	if errors.Is(err, proctree.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(table{tab}.PIDs(), os.Getpid()) {
		t.Errorf("PIDs lack this process (%d)", os.Getpid())
	}
}

// fakeEnder is a Procs over a fake table: what it ends leaves the table.
type fakeEnder struct {
	tab   fakeProcs
	ended []int
}

var _ Procs = (*fakeEnder)(nil)

func (f *fakeEnder) Endable(pick Picker) ([]proctree.Ended, error) {
	var out []proctree.Ended
	for _, pid := range pick(f.tab) {
		if p, ok := f.tab[pid]; ok {
			out = append(out, proctree.Ended{PID: pid, Comm: p.comm})
		}
	}
	return out, nil
}

func (f *fakeEnder) End(ctx context.Context, pick Picker, grace time.Duration) ([]proctree.Ended, error) {
	out, _ := f.Endable(pick)
	for i := range out {
		out[i].Signal = "TERM"
		delete(f.tab, out[i].PID)
		f.ended = append(f.ended, out[i].PID)
	}
	return out, nil
}

// TestRunEndsWhatItPicks: gc, dry or not, attributes to each task the
// processes picked in the table (its pane's, its marked daemon's, a
// pruned task's), spares those below an active task's pane, and a real
// run ends them and records them.
func TestRunEndsWhatItPicks(t *testing.T) {
	for _, dry := range []bool{true, false} {
		w := here(t)
		for i := range w.tc.panes {
			switch w.tc.panes[i].ID {
			case "%1":
				w.tc.panes[i].PID = 200
			case "%3":
				w.tc.panes[i].PID = 300
			}
		}
		dir := w.store.Dir()
		old, run := marked("t_old00001", dir), marked("t_run00001", dir)
		ender := &fakeEnder{tab: fakeProcs{
			1:   {comm: "init", sid: 1},
			200: {ppid: 1, sid: 200, comm: "bash", env: old},
			201: {ppid: 200, sid: 200, comm: "node", env: old},
			220: {ppid: 1, sid: 220, comm: "codex", env: old},
			300: {ppid: 1, sid: 300, comm: "bash", env: run},
			301: {ppid: 300, sid: 300, comm: "sh", env: old}, // below an active task's pane
			500: {ppid: 1, sid: 500, comm: "node", env: marked("t_gone0001", dir)},
			501: {ppid: 1, sid: 501, comm: "node", env: marked("t_lost0007", dir)},
		}}
		w.d.Procs = ender
		res, err := Run(t.Context(), w.d, Options{OlderThan: time.Hour, DryRun: dry, QuitWait: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]int{}
		for _, x := range res.Tasks {
			for _, p := range x.Processes {
				got[x.ID] = append(got[x.ID], p.PID)
			}
			if x.ID == "t_lost0007" && !x.Pruned {
				t.Errorf("dry %v: a process of a task the state lost makes a target not marked pruned: %+v", dry, x)
			}
		}
		want := map[string][]int{"t_old00001": {200, 201, 220}, "t_gone0001": {500}, "t_lost0007": {501}}
		for id, pids := range want {
			slices.Sort(got[id])
			if !slices.Equal(got[id], pids) {
				t.Errorf("dry %v: %s's processes %v, want %v", dry, id, got[id], pids)
			}
		}
		if len(got) != len(want) || res.Processes() != 5 {
			t.Errorf("dry %v: processes %v (%d), want those of %d tasks", dry, got, res.Processes(), len(want))
		}
		slices.Sort(ender.ended)
		switch {
		case dry && len(ender.ended) != 0:
			t.Errorf("a dry run ended %v", ender.ended)
		case !dry && !slices.Equal(ender.ended, []int{200, 201, 220, 500, 501}):
			t.Errorf("ended %v, want the five picked", ender.ended)
		case !dry && w.read("t_old00001").Reclaimed.IsZero():
			t.Error("t_old00001 not recorded reclaimed")
		}
	}
}
