// Tasks on other machines: reaching a task's tmux server and its git work
// tree through the Env's host pool (package hosts).

package runner

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/runner/placement"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/settings"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// PaneClient is the tmux client of t's pane: this machine's server, or
// its host's over ssh (an unknown host is a usage error).
func (env *Env) PaneClient(ctx context.Context, t *state.Task) (*tmuxctl.Client, error) {
	if t.Tmux.Host == "" {
		return env.TC, nil
	}
	c, err := env.Hosts.Conn(ctx, t.Tmux.Host)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	return c.TC(), nil
}

// RemotePaneAlive reports whether the pane of t, a task on a host, is its
// own and alive there (false when the host does not answer).
func RemotePaneAlive(ctx context.Context, env *Env, t *state.Task) bool {
	tc, err := env.PaneClient(ctx, t)
	if err != nil || t.Tmux.Pane == "" {
		return false
	}
	info, err := tc.Pane(ctx, t.Tmux.Pane)
	return err == nil && !info.Dead && info.WindowName == t.ID
}

// GitContext is ctx for gitsnap calls on t's work tree: on its host
// (gitsnap.On) for a task there.
func (env *Env) GitContext(ctx context.Context, t *state.Task) (context.Context, error) {
	return env.Hosts.GitOn(ctx, t.Tmux.Host)
}

// placeOnPool waits for a slot in task t's pool of hosts and claims it
// (placement.Placer.PlaceTask), and returns t as placed and how it starts
// there.
func placeOnPool(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile, set settings.Run) (*state.Task, *settings.Start, error) {
	pl := placement.Placer{Book: env.Record(), Hosts: env.Hosts, Say: env.Say,
		Reconcile: func(ctx context.Context) (*state.State, error) { return Reconcile(ctx, env) }}
	return pl.PlaceTask(ctx, t, placement.RemoteSite(prof, t.Dir, set.Start), set.Detached)
}
