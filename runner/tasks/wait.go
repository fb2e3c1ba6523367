package tasks

import (
	"context"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
)

// WaitOptions controls Wait.
type WaitOptions struct {
	Any bool // return when the first task ends
	// UntilInput also ends the wait when a task needs input.
	UntilInput bool
}

// settled reports whether a task is done waiting for: terminal, orphaned,
// or (with untilInput) waiting for input.
func settled(t *state.Task, untilInput bool) bool {
	return t.Status.IsTerminal() || t.Status == state.StatusOrphaned || (untilInput && t.Status == state.StatusNeedsInput)
}

// Wait blocks until the tasks (all, or with Any the first) have ended,
// watching the state directory (no polling), and returns them.
func Wait(ctx context.Context, d Deps, refs []string, opts WaitOptions) ([]*state.Task, error) {
	st, err := d.Reconcile(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range refs {
		t, err := st.FindTask(r)
		if err != nil {
			return nil, fault.Usagef("%v (see 'runner ps --all')", err)
		}
		ids = append(ids, t.ID)
	}
	return waitIDs(ctx, d, st, ids, opts)
}

// waitIDs is the wait loop of Wait and All: st is a fresh read. Tasks
// that ended already are answered from st, with no watch (whose inotify
// instance this process's exit would wait for the kernel to tear down);
// else the watch is set, the state read again (an end recorded meanwhile
// is not missed), and each change looked at.
func waitIDs(ctx context.Context, d Deps, st *state.State, ids []string, opts WaitOptions) ([]*state.Task, error) {
	if out, over, err := ended(st, ids, opts); err != nil || over {
		return out, err
	}
	changes, err := d.Store.Watch(ctx)
	if err != nil {
		return nil, err
	}
	if st, err = d.Store.Read(ctx); err != nil {
		return nil, err
	}
	safety := time.NewTicker(5 * time.Second)
	defer safety.Stop()
	for {
		if out, over, err := ended(st, ids, opts); err != nil || over {
			return out, err
		}
		select {
		case <-ctx.Done():
			out, _, _ := ended(st, ids, opts)
			return out, ctx.Err()
		case <-changes:
			st, err = d.Store.Read(ctx)
		case <-safety.C:
			// A supervisor that died leaves no write behind: reconcile.
			st, err = d.Reconcile(ctx)
		}
		if err != nil {
			return nil, err
		}
	}
}

// ended is the tasks ids in st, and whether the wait is over: all of them
// settled, or with Any one.
func ended(st *state.State, ids []string, opts WaitOptions) ([]*state.Task, bool, error) {
	var out []*state.Task
	done := 0
	for _, id := range ids {
		t := st.Task(id)
		if t == nil {
			return nil, false, fault.Usagef("task %s was pruned while waiting", id)
		}
		out = append(out, t)
		if settled(t, opts.UntilInput) {
			done++
		}
	}
	return out, done == len(ids) || (opts.Any && done > 0), nil
}

// AllSet returns the tasks `runner wait --all` waits for: every active
// task (of project, if it is not the zero projects.Ref) and every active
// task queued, directly or through others, behind one of them; in dispatch
// order.
func AllSet(st *state.State, project projects.Ref) []string {
	in := map[string]bool{}
	tasks := st.TaskList()
	all := project == projects.Ref{}
	for _, t := range tasks {
		if t.Status.IsActive() && (all || project.Has(t)) {
			in[t.ID] = true
		}
	}
	for grew := true; grew; {
		grew = false
		for _, t := range tasks {
			if in[t.ID] || !t.Status.IsActive() {
				continue
			}
			for _, d := range t.After {
				if in[d] {
					in[t.ID], grew = true, true
					break
				}
			}
		}
	}
	var ids []string
	for _, t := range tasks {
		if in[t.ID] {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// All blocks until every task of AllSet (computed at the call)
// has ended and returns them in dispatch order; none is no error. project
// is empty (every task) or a name or directory (see projects.Select).
func All(ctx context.Context, d Deps, project string) ([]*state.Task, error) {
	st, err := d.Reconcile(ctx)
	if err != nil {
		return nil, err
	}
	var ref projects.Ref
	if project != "" {
		if ref, err = projects.Select(st, project); err != nil {
			return nil, err
		}
	}
	ids := AllSet(st, ref)
	d.Say("waiting for %d task(s): %s", len(ids), strings.Join(ids, " "))
	return waitIDs(ctx, d, st, ids, WaitOptions{})
}
