package group

import (
	"context"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/state"
)

// SetupStore is the state a Setup uses: a *state.Store.
type SetupStore interface {
	UpdateGroups(ctx context.Context, fn func(map[string]*state.Group) error) error
	// Hosts are the registered hosts by name.
	Hosts(ctx context.Context) (map[string]*state.Host, error)
}

// SetupHosts are the registered hosts as a Setup reaches them: a
// *hosts.Pool.
type SetupHosts interface {
	Conn(ctx context.Context, name string) (*hosts.Conn, error)
	// GitOn is ctx for gitsnap's calls on host.
	GitOn(ctx context.Context, host string) (context.Context, error)
}

// Setup is the part of a Launcher that sets a group up: its snapshot
// and its carries (Snapshot, Carry), its record (Save, Forget) and the
// hosts of a pool (Hosts), over the state and the hosts registered in
// it, as cmd/runner's launcher embeds it.
type Setup struct {
	Store SetupStore
	// Pool reaches the hosts (Env.Hosts).
	Pool SetupHosts
}

// Snapshot takes the group's snapshot of the repository at dir, here.
func (r Setup) Snapshot(ctx context.Context, dir, id, label string) (*gitsnap.Snapshot, error) {
	return gitsnap.Take(ctx, dir, gitsnap.Options{ID: id, Label: label})
}

// Carry carries the snapshot into the repository at dir on host: its
// commit (what it reaches, less what the snapshot's base there has) and
// its ref.
func (r Setup) Carry(ctx context.Context, host, dir string, snap *gitsnap.Snapshot) error {
	there, err := r.Pool.GitOn(ctx, host)
	if err != nil {
		return err
	}
	_, err = gitsnap.Carry(ctx, snap.Dir, there, dir, []gitsnap.CarryRef{{Ref: snap.Ref, Commit: snap.Commit}}, []string{snap.Base})
	return err
}

// Save records g: a new group whole, a known one's candidates.
func (r Setup) Save(ctx context.Context, g *state.Group) error {
	return r.Store.UpdateGroups(ctx, func(gs map[string]*state.Group) error {
		if x, ok := gs[g.ID]; ok {
			x.Tasks = g.Tasks
			return nil
		}
		c := *g
		gs[g.ID] = &c
		return nil
	})
}

// Forget removes group id's record.
func (r Setup) Forget(ctx context.Context, id string) error {
	return r.Store.UpdateGroups(ctx, func(gs map[string]*state.Group) error { delete(gs, id); return nil })
}

// Hosts are the hosts of where: the host named (registered), or the
// pool's members that are not drained.
func (r Setup) Hosts(ctx context.Context, where string) ([]string, error) {
	if !hosts.IsPool(where) {
		if _, err := r.Pool.Conn(ctx, where); err != nil {
			return nil, err
		}
		return []string{where}, nil
	}
	all, err := r.Store.Hosts(ctx)
	if err != nil {
		return nil, err
	}
	members, err := hosts.Members(all, where)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range members {
		if !h.Drained {
			out = append(out, h.Name)
		}
	}
	return out, nil
}
