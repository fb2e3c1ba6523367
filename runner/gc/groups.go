package gc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/state"
)

// PickedRefPrefix is where a pick keeps, here, the tip of a candidate it
// brought back from its host (refs/runner/picked/ID: group's
// PickedRefPrefix, held equal by a test).
const PickedRefPrefix = "refs/runner/picked/"

// GroupRef is a ref a group across hosts left, which gc removed (with
// DryRun: would): the group's snapshot on a host it was carried to, or a
// pick's tip here (Host "").
type GroupRef struct {
	Group string `json:"group"`
	Host  string `json:"host,omitempty"`
	Ref   string `json:"ref"`
}

// gcGroups removes the refs each group across hosts left once it has gone
// (groupGone): its snapshot's ref on each host it was carried to
// (state.Group.Carried), hosts that got no candidate included, and each
// pick's tip here (PickedRefPrefix), every git call through gitsnap, on a
// host over its connection (Deps.GitOn). A host that cannot be reached is
// warned about and kept for the next gc; once none is left the group is
// marked (RefsDropped) and not looked at again.
func gcGroups(ctx context.Context, d Deps, st *state.State, opts Options, res *Result) error {
	groups, err := d.Store.Groups(ctx)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(groups))
	for id, g := range groups {
		if len(g.Carried) > 0 && g.RefsDropped.IsZero() && groupGone(g, st, d.Now(), opts.OlderThan) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		g := groups[id]
		left := dropGroupRefs(ctx, d, g, opts.DryRun, res)
		if opts.DryRun {
			continue
		}
		err := d.Store.UpdateGroup(ctx, id, func(x *state.Group) error {
			x.Carried = left
			if len(left) == 0 {
				x.RefsDropped = d.Now()
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// groupGone reports whether every candidate of g has gone for gc: ended
// at least olderThan ago (what gc reclaims), or its record pruned.
func groupGone(g *state.Group, st *state.State, now time.Time, olderThan time.Duration) bool {
	for _, id := range g.Tasks {
		t := st.Tasks[id]
		if t != nil && (!t.Status.IsTerminal() || now.Sub(t.Ended) < olderThan) {
			return false
		}
	}
	return true
}

// dropGroupRefs removes g's refs here and on its hosts (with dryRun:
// lists those there), adding them to res, and returns the hosts whose
// refs could not be removed.
func dropGroupRefs(ctx context.Context, d Deps, g *state.Group, dryRun bool, res *Result) (left []string) {
	picked := make([]string, len(g.Tasks))
	for i, id := range g.Tasks {
		picked[i] = PickedRefPrefix + id
	}
	if refs, err := dropRefs(ctx, d, "", g.Dir, picked, dryRun); err != nil {
		d.Warn("gc: group %s: the picks' refs in %s: %v", g.ID, g.Dir, err)
	} else {
		for _, r := range refs {
			res.Refs = append(res.Refs, GroupRef{Group: g.ID, Ref: r})
		}
	}
	snap := []string{gitsnap.RefPrefix + g.ID}
	for _, host := range g.Carried {
		refs, err := dropRefs(ctx, d, host, g.Dir, snap, dryRun)
		if err != nil {
			d.Warn("gc: group %s: its snapshot on host %s (kept for the next gc): %v", g.ID, host, err)
			left = append(left, host)
			continue
		}
		for _, r := range refs {
			res.Refs = append(res.Refs, GroupRef{Group: g.ID, Host: host, Ref: r})
		}
	}
	return left
}

// dropRefs removes refs in the repository at dir on host ("" here), or
// with dryRun lists those there; on a host whose repository is the one
// here (a host on this machine) or is gone, none.
func dropRefs(ctx context.Context, d Deps, host, dir string, refs []string, dryRun bool) ([]string, error) {
	gctx, err := d.Hosts.GitOn(ctx, host)
	if err != nil {
		return nil, err
	}
	if host != "" {
		// A host on this machine whose repository is the one here holds
		// no ref of its own (the group's snapshot here stays); a
		// repository gone there holds none any more.
		same, err := d.git().SameRepository(ctx, dir, gctx, dir)
		switch {
		case errors.Is(err, gitsnap.ErrNotRepo):
			return nil, nil
		case err != nil:
			return nil, err
		case same:
			return nil, nil
		}
	}
	if !dryRun {
		return d.git().DropRefs(gctx, dir, refs)
	}
	var there []string
	for _, r := range refs {
		if _, err := d.git().RefCommit(gctx, dir, r); err == nil {
			there = append(there, r)
		}
	}
	return there, nil
}

// refLine is WriteText's line for a ref removed.
func refLine(r GroupRef, dryRun bool) string {
	where := "here"
	if r.Host != "" {
		where = "on host " + r.Host
	}
	verb := "removed"
	if dryRun {
		verb = "would be removed"
	}
	return fmt.Sprintf("  ref %s %s %s (group %s has gone)", r.Ref, verb, where, r.Group)
}
