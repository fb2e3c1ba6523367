package gc

import (
	"context"
	"errors"
	"fmt"

	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// gcRemote is GC for the finished tasks on hosts: per host, one listing of
// its panes and clients; each task's own window that ended at least
// opts.OlderThan ago and that no client shows is closed there (tmux hangs
// up its processes) and the task recorded reclaimed. A host that cannot be
// reached is skipped, said in res.Skipped for each of its tasks.
func gcRemote(ctx context.Context, d Deps, st *state.State, opts Options, res *Result) error {
	byHost := map[string][]*state.Task{}
	now := d.Now()
	for _, t := range st.TaskList() {
		if t.Tmux.Host != "" && t.Status.IsTerminal() && t.Reclaimed.IsZero() && t.Tmux.Pane != "" && now.Sub(t.Ended) >= opts.OlderThan {
			byHost[t.Tmux.Host] = append(byHost[t.Tmux.Host], t)
		}
	}
	var closed []*target
	for host, tasks := range byHost {
		c, err := d.Hosts.Conn(ctx, host)
		if err == nil {
			var done []*target
			if done, err = gcHostTasks(ctx, c, tasks, opts, res); err == nil {
				closed = append(closed, done...)
				continue
			}
		}
		for _, t := range tasks {
			res.Skipped = append(res.Skipped, Skip{ID: t.ID, Pane: t.Tmux.Pane, Reason: err.Error()})
		}
	}
	if opts.DryRun || len(closed) == 0 {
		return nil
	}
	return recordReclaimed(ctx, d, closed, "gc")
}

// gcHostTasks is gcRemote on one host: its panes and clients listed once,
// each task's own window that no client shows closed, and the files
// runner kept there for the tasks removed (their copies here stay). It
// returns the tasks to record reclaimed.
func gcHostTasks(ctx context.Context, c Host, tasks []*state.Task, opts Options, res *Result) ([]*target, error) {
	panes, err := c.Tmux().ListPanes(ctx)
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", c.Host().Name, err)
	}
	clients, _ := c.Tmux().Clients(ctx)
	shown := map[string]string{}
	for _, cl := range clients {
		shown[cl.WindowID] = cl.TTY
	}
	byPane := map[string]tmuxctl.PaneInfo{}
	for _, p := range panes {
		byPane[p.ID] = p
	}
	var closed []*target
	var dirs []string
	for _, t := range tasks {
		p, ok := byPane[t.Tmux.Pane]
		g := &target{task: t, item: Task{ID: t.ID, Status: t.Status, Ended: t.Ended, Session: t.Tmux.Session,
			AgentSession: t.AgentSession, Host: c.Host().Name, Processes: []proctree.Ended{}}}
		switch {
		case ok && ownPane(t, p) && shown[p.WindowID] != "":
			res.Skipped = append(res.Skipped, Skip{ID: t.ID, Pane: p.ID, Reason: "a tmux client (" + shown[p.WindowID] + ") on host " + c.Host().Name + " is showing its window"})
			continue
		case ok && ownPane(t, p):
			g.pane, g.item.Pane = &p, p.ID
			if !opts.DryRun {
				if err := c.Tmux().KillWindow(ctx, p.ID); err != nil && !errors.Is(err, tmuxctl.ErrNotFound) {
					res.Skipped = append(res.Skipped, Skip{ID: t.ID, Pane: p.ID, Reason: fmt.Sprintf("host %s: %v", c.Host().Name, err)})
					continue
				}
				g.item.WindowClosed = true
			}
			res.Tasks = append(res.Tasks, g.item)
		}
		closed = append(closed, g) // its window gone either way
		if dir, err := c.TaskPath(ctx, t.ID); err == nil {
			dirs = append(dirs, dir)
		}
	}
	if !opts.DryRun && len(dirs) > 0 {
		_, _ = c.Run(ctx, append([]string{"rm", "-rf", "--"}, dirs...)...)
	}
	return closed, nil
}
