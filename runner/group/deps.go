package group

import (
	"context"
	"fmt"
	"time"

	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
)

// Store is the state a group's operations read and change: a
// *state.Store.
type Store interface {
	// FindGroup is a group by id or unique prefix; UpdateGroup changes
	// one under the state's lock.
	FindGroup(ctx context.Context, ref string) (*state.Group, error)
	UpdateGroup(ctx context.Context, id string, fn func(*state.Group) error) error
	// UpdateTask changes one task's record (its check's result).
	UpdateTask(ctx context.Context, id string, fn func(*state.Task) error) error
	// TaskText is a task's whole text (its record's may be cut).
	TaskText(t *state.Task) (string, error)
	// Watch wakes on each change of the state.
	Watch(ctx context.Context) (<-chan struct{}, error)
}

// Tasks is what a group's operations ask of package runner about its
// candidates, as cmd/runner wires it (runner's Reconcile, the task
// record, Send; gc's cancels).
type Tasks interface {
	// Reconcile reads the state after recording what became of the tasks
	// nothing supervises (runner.Reconcile).
	Reconcile(ctx context.Context) (*state.State, error)
	// Task reads one task's whole record.
	Task(ctx context.Context, id string) (*state.Task, error)
	// Send delivers a follow-up turn to a candidate, supervised by a
	// process of its own (runner.Send, detached).
	Send(ctx context.Context, id, text string) error
	// Cancel cancels a candidate still at work, with the reason given
	// (gc.CancelBecause).
	Cancel(ctx context.Context, id, reason string) error
	// Close closes a candidate's window, ending it if it still runs
	// (gc.Cancel with kill).
	Close(ctx context.Context, id string) error
}

// Merges are the forecasts and merges of the candidates' branches:
// package worktree's (Worktrees).
type Merges interface {
	// Forecast forecasts merging the candidates' branches into branch
	// into of their repository ("": its current branch), in one look at
	// it (worktree.CheckMergesInto).
	Forecast(ctx context.Context, ids []string, into string) (map[string]*worktree.Check, error)
	// Merge merges a candidate's branch (worktree.Merge).
	Merge(ctx context.Context, req worktree.MergeRequest) error
	// MergeHere merges a candidate brought back from its host, as Merge
	// does, with t its record as here (its worktree here, no host).
	MergeHere(ctx context.Context, req worktree.MergeRequest, t *state.Task) error
}

// Hosts are the registered hosts as a group reaches its candidates on
// them: a *hosts.Pool (OnPool).
type Hosts interface {
	// GitOn is ctx for gitsnap's calls on host ("": this machine).
	GitOn(ctx context.Context, host string) (context.Context, error)
	// Via is the transport to host (a candidate's check there).
	Via(ctx context.Context, host string) (transport.Transport, error)
}

// Sandbox wraps a sandboxed candidate's check in a sandbox like its
// agent's: Wrap here, WrapThere on its host.
type Sandbox interface {
	Wrap(ctx context.Context, t *state.Task, argv []string) ([]string, error)
	WrapThere(ctx context.Context, t *state.Task, argv []string) ([]string, error)
}

// Deps is what a group's operations use, built by cmd/runner: the
// state, the candidates as runner has them, their merges, the hosts,
// the checks' sandbox, the shadows that vote, the clock and progress.
// Every field is required but Hosts, Sandbox and Alive.
type Deps struct {
	Store Store
	Tasks Tasks
	// Merges forecasts and merges candidates (Worktrees).
	Merges Merges
	// Hosts reaches the registered hosts (nil: every candidate is here).
	Hosts Hosts
	// Sandbox wraps a sandboxed candidate's check (nil: one here runs
	// unwrapped; one on a host is not run, and its result says so).
	Sandbox Sandbox
	// Ask runs shadows (ask.Run).
	Ask func(ctx context.Context, req ask.Request) ([]ask.Answer, error)
	// Alive reports whether the process pid, of identity start, still
	// runs (nil: proctree.AliveAs).
	Alive func(pid int, start string) bool
	// Say writes one line of progress.
	Say func(format string, args ...any)
	// Now is the clock.
	Now func() time.Time
}

// OnPool is the Hosts of pool.
func OnPool(pool *hosts.Pool) Hosts { return poolHosts{pool} }

// poolHosts is the Hosts of a pool.
type poolHosts struct{ p *hosts.Pool }

// GitOn is the pool's ctx for gitsnap's calls on host.
func (h poolHosts) GitOn(ctx context.Context, host string) (context.Context, error) {
	return h.p.GitOn(ctx, host)
}

// Via is the transport of the pool's connection to host.
func (h poolHosts) Via(ctx context.Context, host string) (transport.Transport, error) {
	c, err := h.p.Conn(ctx, host)
	if err != nil {
		return nil, err
	}
	return c.Transport(), nil
}

// Worktrees are the Merges of package worktree over d.
func Worktrees(d worktree.Deps) Merges { return worktreeMerges{d} }

// worktreeMerges is the Merges of package worktree.
type worktreeMerges struct{ d worktree.Deps }

// Forecast is worktree.CheckMergesInto.
func (w worktreeMerges) Forecast(ctx context.Context, ids []string, into string) (map[string]*worktree.Check, error) {
	return worktree.CheckMergesInto(ctx, w.d, ids, into)
}

// Merge is worktree.Merge.
func (w worktreeMerges) Merge(ctx context.Context, req worktree.MergeRequest) error {
	_, _, err := worktree.Merge(ctx, w.d, req)
	return err
}

// MergeHere is worktree.Merge of t, whatever req.Ref names, its git
// here.
func (w worktreeMerges) MergeHere(ctx context.Context, req worktree.MergeRequest, t *state.Task) error {
	d := w.d
	d.Core = oneTask{d.Core, t}
	d.GitContext = func(ctx context.Context, _ *state.Task) (context.Context, error) { return ctx, nil }
	_, _, err := worktree.Merge(ctx, d, req)
	return err
}

// oneTask is a worktree.Core whose one task is t, whatever the ref.
type oneTask struct {
	worktree.Core
	t *state.Task
}

// GetTask is t.
func (o oneTask) GetTask(context.Context, string) (*state.Task, error) { return o.t, nil }

// via is the transport to host, through d.Hosts.
func (d Deps) via(ctx context.Context, host string) (transport.Transport, error) {
	if d.Hosts == nil {
		return nil, fmt.Errorf("not reached: no hosts given")
	}
	return d.Hosts.Via(ctx, host)
}
