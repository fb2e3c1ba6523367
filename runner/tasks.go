package runner

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/projects"

	"github.com/runner-cli/runner/runner/exit"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// PSOptions filters ListTasks.
type PSOptions struct {
	All     bool   // include finished tasks
	Project string // only this project: a name or a directory (see SelectProject)
}

// ListTasks reconciles and returns the tasks, newest first.
func ListTasks(ctx context.Context, env *Env, opts PSOptions) ([]*state.Task, error) {
	st, err := Reconcile(ctx, env)
	if err != nil {
		return nil, err
	}
	var ref projects.Ref
	if opts.Project != "" {
		if ref, err = projects.Select(st, opts.Project); err != nil {
			return nil, err
		}
	}
	all := st.TaskList()
	if opts.All {
		// Finished tasks the index no longer carries come from the
		// archive, as their index entries show them (Archived set).
		if all, err = st.AllTasks(); err != nil {
			return nil, err
		}
	}
	var out []*state.Task
	for _, t := range all {
		if opts.Project != "" && !ref.Has(t) {
			continue
		}
		if !opts.All && t.Status.IsTerminal() {
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.After(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// GetTask reconciles and returns one task by id or unique prefix.
func GetTask(ctx context.Context, env *Env, ref string) (*state.Task, error) {
	st, err := Reconcile(ctx, env)
	if err != nil {
		return nil, err
	}
	t, err := st.FindTask(ref)
	if err != nil {
		return nil, exit.Usagef("%v (see 'runner ps --all')", err)
	}
	return t, nil
}

// WaitOptions controls WaitTasks.
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

// WaitTasks blocks until the tasks (all, or with Any the first) have ended,
// watching the state directory (no polling), and returns them.
func WaitTasks(ctx context.Context, env *Env, refs []string, opts WaitOptions) ([]*state.Task, error) {
	st, err := Reconcile(ctx, env)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range refs {
		t, err := st.FindTask(r)
		if err != nil {
			return nil, exit.Usagef("%v (see 'runner ps --all')", err)
		}
		ids = append(ids, t.ID)
	}
	return waitIDs(ctx, env, st, ids, opts)
}

// waitIDs is the wait loop of WaitTasks and WaitAll: st is a fresh read.
func waitIDs(ctx context.Context, env *Env, st *state.State, ids []string, opts WaitOptions) ([]*state.Task, error) {
	changes, err := env.Store.Watch(ctx)
	if err != nil {
		return nil, err
	}
	safety := time.NewTicker(5 * time.Second)
	defer safety.Stop()
	for {
		var out []*state.Task
		done := 0
		for _, id := range ids {
			t := st.Task(id)
			if t == nil {
				return nil, exit.Usagef("task %s was pruned while waiting", id)
			}
			out = append(out, t)
			if settled(t, opts.UntilInput) {
				done++
			}
		}
		if done == len(ids) || (opts.Any && done > 0) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-changes:
			st, err = env.Store.Read(ctx)
		case <-safety.C:
			// A supervisor that died leaves no write behind: reconcile.
			st, err = Reconcile(ctx, env)
		}
		if err != nil {
			return nil, err
		}
	}
}

// AttachTarget returns the tmux target for a task or a project: the task's
// window, or the project's session.
func AttachTarget(ctx context.Context, env *Env, ref string) (string, error) {
	st, err := env.Store.Read(ctx)
	if err != nil {
		return "", err
	}
	if t, err := st.FindTask(ref); err == nil {
		if t.Tmux.Pane == "" {
			return "", exit.Usagef("task %s has no pane yet", t.ID)
		}
		return t.Tmux.Pane, nil
	}
	for _, t := range st.Tasks {
		if t.Project == ref && t.Tmux.Session != "" {
			return tmuxctl.SessionTarget(t.Tmux.Session), nil
		}
	}
	if p, ok := st.Projects[ref]; ok {
		return tmuxctl.SessionTarget(projects.SessionName(p.Name, p.Dir)), nil
	}
	return "", exit.Usagef("%q is neither a task (see 'runner ps --all') nor a project with a session", ref)
}

// AttachArgv selects the pane (or project session) that AttachTarget
// finds for ref and returns the command that puts the user's terminal on
// it: tmux attach-session (switch-client when inside is true, the caller
// being in a client of runner's server), or for a task on a host
// ssh -t HOST tmux attach-session there.
func AttachArgv(ctx context.Context, env *Env, ref string, inside bool) ([]string, error) {
	target, err := AttachTarget(ctx, env, ref)
	if err != nil {
		return nil, err
	}
	tc := env.TC
	var host *hosts.Conn
	if st, err := env.Store.Read(ctx); err == nil {
		if t, err := st.FindTask(ref); err == nil && t.Tmux.Host != "" {
			if host, err = env.HostConn(ctx, t.Tmux.Host); err != nil {
				return nil, err
			}
			tc = host.TC()
		} else if p, ok := st.Projects[ref]; ok && p.Host != "" && err != nil {
			if host, err = env.HostConn(ctx, p.Host); err != nil {
				return nil, err
			}
			tc = host.TC()
		}
	}
	if strings.HasPrefix(target, "%") {
		if err := tc.SelectPane(ctx, target); err != nil {
			return nil, err
		}
	}
	if host == nil {
		return tc.AttachArgv(target, inside), nil
	}
	argv := tc.AttachArgv(target, false)
	argv[0] = "tmux" // the host's, from its PATH
	return host.Transport().TerminalArgv(argv...), nil
}

// Age formats how long ago t was, for tables.
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}
