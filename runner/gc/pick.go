// Picking a task's processes: which processes of the table a gc or a
// cancel --kill ends. The choice is a function of a process table (the
// ProcTable interface: a *proctree.Table, a fake in the tests) and of
// what gc knows beside it, with no I/O of its own.

package gc

import (
	"context"
	"slices"
	"time"

	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/state"
)

// ProcTable is a process table as the picking reads it: a
// *proctree.Table (table), a fake in the tests.
type ProcTable interface {
	// PIDs are the processes of the table.
	PIDs() []int
	// Env is the value of key in the environment pid was started with.
	Env(pid int, key string) (string, bool)
	// Descendants are roots and every process below them, never through
	// a tmux server.
	Descendants(roots ...int) []int
	// Session are the members of session sid while its leader leads it.
	Session(sid int) []int
	// TmuxServerOf is the nearest tmux server above pid (0: none).
	TmuxServerOf(pid int) int
}

// Picker chooses, in a process table, the processes to end.
type Picker func(ProcTable) []int

// Procs are this machine's processes as gc ends those it picks:
// Proctree, a fake in the tests.
type Procs interface {
	// Endable is what End would end now of what pick finds (a dry run).
	Endable(pick Picker) ([]proctree.Ended, error)
	// End ends what pick finds, the grace between SIGTERM and SIGKILL.
	End(ctx context.Context, pick Picker, grace time.Duration) ([]proctree.Ended, error)
}

// Proctree is the Procs of package proctree: the system's process table
// (proctree.End and its one rule, proctree.Endable).
type Proctree struct{}

var _ Procs = Proctree{}

// Endable is what proctree.End would end now of what pick finds.
func (Proctree) Endable(pick Picker) ([]proctree.Ended, error) {
	tab, err := proctree.Read()
	if err != nil {
		return nil, err
	}
	var out []proctree.Ended
	for _, p := range proctree.Endable(tab, pick.onTable) {
		out = append(out, proctree.Ended{PID: p.PID, Comm: p.Comm})
	}
	return out, nil
}

// End is proctree.End.
func (Proctree) End(ctx context.Context, pick Picker, grace time.Duration) ([]proctree.Ended, error) {
	return proctree.End(ctx, pick.onTable, grace)
}

// onTable is pick on a *proctree.Table.
func (pick Picker) onTable(t *proctree.Table) []int { return pick(table{t}) }

// table is a ProcTable over a *proctree.Table.
type table struct{ *proctree.Table }

// PIDs are the processes of the table, in order.
func (t table) PIDs() []int {
	out := make([]int, 0, len(t.Procs))
	for pid := range t.Procs {
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

// picking is what the choice of a task's processes knows beside the
// process table: the state directory (dir, RUNNER_STATE_DIR), runner's
// tmux server (0: none running), the targets (a task's id and its live
// pane's process, 0: none), the processes never ended with what runs
// below them (protect: the panes and supervisors of active tasks), and
// whether a process of a task the state no longer has is taken (pruned).
type picking struct {
	dir     string
	server  int
	targets []pickTarget
	protect []int
	pruned  bool
}

// pickTarget is one task whose processes are picked.
type pickTarget struct {
	id      string
	panePID int
}

// taskPicker chooses the processes of targets in a process table (see
// picking.pick), reading the state afresh with each table; a state that
// cannot be read picks nothing. owner maps each chosen pid to its task
// id.
func taskPicker(ctx context.Context, d Deps, targets []*target, protect []int, pruned bool) (Picker, map[int]string) {
	owner := map[int]string{}
	server, _ := d.TC.ServerPID(ctx)
	p := picking{dir: d.Store.Dir(), server: server, protect: protect, pruned: pruned}
	for _, g := range targets {
		pt := pickTarget{id: g.item.ID}
		if g.pane != nil {
			pt.panePID = g.pane.PID
		}
		p.targets = append(p.targets, pt)
	}
	pick := func(t ProcTable) []int {
		// Read after the table: a task dispatched since the caller's read
		// is in the state before its agent starts, and a target started
		// again meanwhile (send resumes it) is active in it.
		st, err := d.Store.Read(ctx)
		if err != nil {
			return nil
		}
		return p.pick(t, st.Tasks, owner)
	}
	return pick, owner
}

// pick chooses the processes of the targets in tab: the descendants of
// each live pane's process and the members of its session, every process
// whose environment names this state directory and one of the targets
// (or, with pruned, a task known does not have), and all that runs below
// those; never a protected process or anything below one, nor the tmux
// server, nor a target that is active again in known (the state read
// after tab). owner gets each chosen pid's task id; it keeps those of
// earlier calls (proctree.End reports processes gone by its last call).
func (p picking) pick(tab ProcTable, known map[string]*state.Task, owner map[int]string) []int {
	safe := map[int]bool{}
	for _, pid := range tab.Descendants(p.protect...) {
		safe[pid] = true
	}
	if p.server > 0 {
		// The server itself, not its panes: a server started by a runner
		// command in a task's pane inherits the task's variables.
		safe[p.server] = true
	}
	ids := map[string]bool{}
	for _, g := range p.targets {
		ids[g.id] = true
	}
	live := func(id string) bool { t := known[id]; return t != nil && !t.Status.IsTerminal() }
	for pid, id := range markedProcs(tab, p.dir, p.server) {
		switch {
		case ids[id] && !live(id):
			owner[pid] = id
		case p.pruned && state.ValidTaskID(id) && known[id] == nil:
			owner[pid] = id
		}
	}
	for _, g := range p.targets {
		if g.panePID <= 0 || live(g.id) {
			continue
		}
		if v, _ := tab.Env(g.panePID, "RUNNER_TASK_ID"); v != g.id {
			continue // the pane's process is gone (its pid may be another's now)
		}
		for _, pid := range append(tab.Descendants(g.panePID), tab.Session(g.panePID)...) {
			if _, ok := owner[pid]; !ok {
				owner[pid] = g.id
			}
		}
	}
	var roots []int
	for pid := range owner {
		roots = append(roots, pid)
	}
	slices.Sort(roots)
	for _, r := range roots {
		for _, pid := range tab.Descendants(r) {
			if _, ok := owner[pid]; !ok {
				owner[pid] = owner[r]
			}
		}
	}
	var out []int
	for pid := range owner {
		if safe[pid] {
			delete(owner, pid)
			continue
		}
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

// markedProcs maps the processes of tab whose environment names the
// state directory dir and a task to that task's id: what left a task's
// process tree for good (a daemon) still carries its marker. A pane of a
// tmux server other than runner's own (server) is left out: its variables
// may be that server's, inherited from the pane that started it. (Under
// runner's own server, started without them, they are the task's: an agent
// its window's close left behind.)
func markedProcs(tab ProcTable, dir string, server int) map[int]string {
	out := map[int]string{}
	for _, pid := range tab.PIDs() {
		if v, ok := tab.Env(pid, "RUNNER_STATE_DIR"); !ok || v != dir {
			continue
		}
		if s := tab.TmuxServerOf(pid); s != 0 && s != server {
			continue
		}
		if id, _ := tab.Env(pid, "RUNNER_TASK_ID"); id != "" {
			out[pid] = id
		}
	}
	return out
}
