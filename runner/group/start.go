package group

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/state"
)

// Launcher is what Start uses to start a group's candidates: the
// snapshot, the hosts and the group's record (Setup gives them) and
// runner's dispatch, as cmd/runner wires them.
type Launcher interface {
	// Snapshot takes the group's snapshot of the repository at dir, here,
	// under the group's id.
	Snapshot(ctx context.Context, dir, id, label string) (*gitsnap.Snapshot, error)
	// Hosts are the hosts a candidate may run on for where (a host's
	// name, any, label:L): one for a name, a pool's members not drained.
	Hosts(ctx context.Context, where string) ([]string, error)
	// Carry makes the snapshot there: the repository at dir on host
	// gets its commit (and what it reaches) and its ref.
	Carry(ctx context.Context, host, dir string, snap *gitsnap.Snapshot) error
	// Dispatch dispatches candidate i of g with agent, detached, in a
	// worktree of its own from g's snapshot (on where, "" here).
	Dispatch(ctx context.Context, g *state.Group, i int, agent, where string) (*state.Task, error)
	// Save records g (a new group, or its candidates); Forget removes it.
	Save(ctx context.Context, g *state.Group) error
	Forget(ctx context.Context, id string) error
	// Say writes one line of progress.
	Say(format string, args ...any)
}

// StartRequest is a group to start: its record (ID, Dir, Text, Check …
// filled in; Tasks empty) and its candidates' agents, in order.
type StartRequest struct {
	Group  *state.Group
	Agents []string
	// Where is where the candidates run: "" here; a host's name, any or
	// label:L: spread over the pool's hosts by placement (each within its
	// maximum, a candidate waiting queued when all are full).
	Where string
}

// ErrNotRepo is wrapped when the group's folder is no git repository (a
// group's candidates each work in a worktree of their own): bad input.
var ErrNotRepo = gitsnap.ErrNotRepo

// Start takes the group's snapshot here, carries it to every host its
// candidates may run on (so each starts from the same commit wherever
// placement puts it), records the group and dispatches its candidates, a
// few at a time. A candidate that cannot be dispatched is said and the
// group goes on with the others; none at all is the error (and the group
// is forgotten). A host the snapshot cannot reach is said and left out:
// when none can be reached, nothing is dispatched.
func Start(ctx context.Context, l Launcher, req StartRequest) (*state.Group, error) {
	g := req.Group
	snap, err := l.Snapshot(ctx, g.Dir, g.ID, "group "+g.Text)
	if err != nil {
		return nil, err
	}
	if req.Where != "" {
		if err := carryAll(ctx, l, req.Where, g, snap); err != nil {
			return nil, err
		}
	}
	if err := l.Save(ctx, g); err != nil {
		return nil, err
	}
	type result struct {
		t   *state.Task
		err error
	}
	results := make([]result, len(req.Agents))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, agent := range req.Agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t, err := l.Dispatch(ctx, g, i, agent, req.Where)
			results[i] = result{t, err}
		}()
	}
	wg.Wait()
	var first error
	for i, res := range results {
		if res.t != nil {
			g.Tasks = append(g.Tasks, res.t.ID)
		}
		if res.err != nil {
			l.Say("group %s: candidate %d (%s): %v", g.ID, i+1, req.Agents[i], res.err)
			if first == nil {
				first = res.err
			}
		}
	}
	if len(g.Tasks) == 0 {
		_ = l.Forget(context.WithoutCancel(ctx), g.ID)
		return nil, fmt.Errorf("group: no candidate could be dispatched: %w", first)
	}
	return g, l.Save(ctx, g)
}

// carryAll carries the snapshot to each host of where, a few at once,
// and records on g those it reached (Carried).
func carryAll(ctx context.Context, l Launcher, where string, g *state.Group, snap *gitsnap.Snapshot) error {
	hosts, err := l.Hosts(ctx, where)
	if err != nil {
		return err
	}
	errs := make([]error, len(hosts))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = l.Carry(ctx, h, g.Dir, snap)
		}()
	}
	wg.Wait()
	var failed []string
	for i, err := range errs {
		if err != nil {
			l.Say("group %s: snapshot not carried to host %s: %v", g.ID, hosts[i], err)
			failed = append(failed, hosts[i]+": "+err.Error())
		} else {
			g.Carried = append(g.Carried, hosts[i]) // for gc to remove once the group has gone
		}
	}
	if len(hosts) > 0 && len(failed) == len(hosts) {
		return fmt.Errorf("group %s: its snapshot reached no host of %s (%s): %w", g.ID, where, strings.Join(failed, "; "), errs[0])
	}
	return nil
}
