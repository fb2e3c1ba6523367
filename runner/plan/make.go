package plan

import (
	"context"
	"slices"

	"github.com/runner-cli/runner/runner/budget"
	"github.com/runner-cli/runner/runner/deps"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
)

// Make is the plan of req, made once and whole: New, the project placed
// and its policy applied (Resolve), its lineage under the task the
// dispatching process runs under (Machine.Caller), --after and --from
// resolved (Wait), its budgets checked against its agent, and what it
// needs checked where it runs (Check). st is the state as read; a bad
// request is a usage error found before anything is recorded.
func Make(ctx context.Context, req Request, profiles []*profile.Profile, st *state.State, m Machine) (*Plan, error) {
	p, err := New(req, profiles)
	if err != nil {
		return nil, err
	}
	place, err := projects.Resolve(st, req.Project, req.Host)
	if err != nil {
		return nil, err
	}
	p.Resolve(place)
	if p.Lineage, err = lineage(st, m.Caller(ctx, st), req); err != nil {
		return nil, err
	}
	after, err := deps.Resolve(st, req.After)
	if err != nil {
		return nil, err
	}
	from, err := resolveFrom(st, req.From, after)
	if err != nil {
		return nil, err
	}
	p.Wait(after, from)
	if err := budget.CheckAgent(p.Settings.Budget(), p.Profile); err != nil {
		return nil, err
	}
	if err := p.Check(ctx, m, st); err != nil {
		return nil, err
	}
	return p, nil
}

// ReadState reads the state Make needs of store for r: the index alone
// (Store.ReadIndex), not every task's record, since Make reads the hot
// fields of the index's tasks and the tasks it names, which State.Task and
// FindTask read whole; the whole state for a door's child, whose
// confinement reads the asking task's folder and home copies.
func (r Request) ReadState(ctx context.Context, store *state.Store) (*state.State, error) {
	if r.Confined != "" {
		return store.Read(ctx)
	}
	return store.ReadIndex(ctx)
}

// lineage makes a dispatch from inside a runner pane (caller, its task) a
// child of that task, refused past the config's max_level.
func lineage(st *state.State, caller string, req Request) (Lineage, error) {
	lin := Lineage{Level: 1, Source: req.Source}
	if lin.Source == "" {
		lin.Source = state.SourceUser
	}
	if caller == "" || !state.ValidTaskID(caller) {
		return lin, nil
	}
	if pt := st.Task(caller); pt != nil {
		lin = Lineage{Parent: pt.ID, Level: pt.Level + 1, Source: pt.ID}
		if req.MaxLevel > 0 && pt.Level >= req.MaxLevel {
			return lin, fault.Usagef("level-%d tasks cannot delegate (task %s is at the last level; max_level is %d in the config)", pt.Level, pt.ID, req.MaxLevel)
		}
	}
	return lin, nil
}

// resolveFrom checks dispatch --from: a task with a worktree of its own,
// among the tasks the new one waits for.
func resolveFrom(st *state.State, ref string, after []string) (string, error) {
	if ref == "" {
		return "", nil
	}
	t, err := st.FindTask(ref)
	if err != nil {
		return "", fault.Usagef("--from %s: %v (see 'runner ps --all')", ref, err)
	}
	if t.Branch == "" {
		return "", fault.Usagef("--from %s: the task has no worktree of its own (it was not dispatched with --worktree)", t.ID)
	}
	if !slices.Contains(after, t.ID) {
		return "", fault.Usagef("--from %s: give --after %s too, so the task starts once %s is done", t.ID, t.ID, t.ID)
	}
	return t.ID, nil
}
