package tasks

import (
	"context"
	"sort"
	"strings"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// ListOptions filters List.
type ListOptions struct {
	All     bool   // include finished tasks
	Project string // only this project: a name or a directory (see projects.Select)
	// Host keeps the tasks on this host ("local": this machine's; a
	// task waiting for a pool is on none yet).
	Host string
}

// List reconciles and returns the tasks, newest first.
func List(ctx context.Context, d Deps, opts ListOptions) ([]*state.Task, error) {
	st, err := d.Reconcile(ctx)
	if err != nil {
		return nil, err
	}
	ref, err := selectProject(st, opts.Project)
	if err != nil {
		return nil, err
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
		if !opts.All && t.Status.IsTerminal() || !state.OnHost(opts.Host, t.Tmux.Host, t.Tmux.Pool) {
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

// selectProject is the project a listing keeps to: none for "" (see
// projects.Select).
func selectProject(st *state.State, project string) (projects.Ref, error) {
	if project == "" {
		return projects.Ref{}, nil
	}
	return projects.Select(st, project)
}

// AttachTarget returns the tmux target for a task or a project: the task's
// window, or the project's session.
func AttachTarget(ctx context.Context, d Deps, ref string) (string, error) {
	st, err := d.Store.Read(ctx)
	if err != nil {
		return "", err
	}
	if t, err := st.FindTask(ref); err == nil {
		if t.Tmux.Pane == "" {
			return "", fault.Usagef("task %s has no pane yet", t.ID)
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
	return "", fault.Usagef("%q is neither a task (see 'runner ps --all') nor a project with a session", ref)
}

// AttachArgv selects the pane (or project session) that AttachTarget
// finds for ref and returns the command that puts the user's terminal on
// it: tmux attach-session (switch-client when inside is true, the caller
// being in a client of runner's server), or for a task on a host
// ssh -t HOST tmux attach-session there.
func AttachArgv(ctx context.Context, d Deps, ref string, inside bool) ([]string, error) {
	target, err := AttachTarget(ctx, d, ref)
	if err != nil {
		return nil, err
	}
	var tc Tmux = d.TC
	var host Host
	if st, err := d.Store.Read(ctx); err == nil {
		name := ""
		if t, err := st.FindTask(ref); err == nil {
			name = t.Tmux.Host
		} else if p, ok := st.Projects[ref]; ok {
			name = p.Host
		}
		if name != "" {
			if host, err = d.HostConn(ctx, name); err != nil {
				return nil, err
			}
			tc = host.Tmux()
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
	return host.TerminalArgv(tc.HostAttachArgv(target)...), nil
}
