package group

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/state"
)

// PickedRefPrefix holds, in the repository here, the tip of each
// candidate brought back from its host by a pick (refs/runner/picked/ID).
const PickedRefPrefix = "refs/runner/picked/"

// broughtBack is a candidate of a host, brought back here to be merged.
type broughtBack struct {
	// Task is the candidate as merged here: its folder a worktree of g's
	// repository here, on its branch, no host.
	Task *state.Task
	// Made says the worktree and branch here were made for the pick (and
	// are removed after it); false when they were here already (the
	// host's repository is this one: a host on this machine).
	Made bool
	// Bytes is what crossed from the host.
	Bytes int
}

// bringBack brings candidate t's work from its host into g's repository
// here: what its agent left uncommitted is committed on its branch there
// (as a merge does), the branch's commits and its snapshot are carried
// here (one pack over the host's connection), and the branch is checked
// out in a worktree here, which the merge then reads as it reads a local
// candidate's.
func bringBack(ctx context.Context, d Deps, g *state.Group, t *state.Task) (*broughtBack, error) {
	there, err := on(ctx, d, t.Tmux.Host)
	if err != nil {
		return nil, err
	}
	text, err := d.Store.TaskText(t)
	if err != nil {
		return nil, err
	}
	if _, err := gitsnap.Commit(there, t.Dir, gitsnap.CommitOptions{TaskID: t.ID, Task: text, Project: t.Project, Agent: t.Agent, Snapshot: t.ID, All: true}); err != nil {
		return nil, fmt.Errorf("bring %s back from host %s: commit what its agent left in %s: %w", t.ID, t.Tmux.Host, t.Dir, err)
	}
	tip, err := gitsnap.RefCommit(there, t.Dir, "refs/heads/"+t.Branch)
	if err != nil {
		return nil, fmt.Errorf("bring %s back from host %s: %w", t.ID, t.Tmux.Host, err)
	}
	snap, err := gitsnap.Get(there, t.Origin, t.ID)
	if err != nil {
		return nil, fmt.Errorf("bring %s back from host %s: its snapshot: %w", t.ID, t.Tmux.Host, err)
	}
	refs := []gitsnap.CarryRef{{Ref: snap.Ref, Commit: snap.Commit}, {Ref: PickedRefPrefix + t.ID, Commit: tip}}
	carried, err := gitsnap.Carry(there, t.Origin, ctx, g.Dir, refs, []string{snap.Base})
	if err != nil {
		return nil, fmt.Errorf("bring %s back from host %s into %s: %w", t.ID, t.Tmux.Host, g.Dir, err)
	}
	out := &broughtBack{Bytes: carried.Bytes}
	local := *t
	local.Tmux.Host, local.Origin = "", g.Dir
	list, err := gitsnap.Worktrees(ctx, g.Dir, t.Branch)
	if err != nil {
		return nil, err
	}
	for _, w := range list {
		if w.Branch == t.Branch && !w.Prunable {
			if w.Head != tip {
				return nil, fmt.Errorf("bring %s back: branch %s here, in %s, is at %s, not at %s as on host %s: %w (merge it by hand, or remove it here)",
					t.ID, t.Branch, w.Path, w.Head, tip, t.Tmux.Host, gitsnap.ErrExists)
			}
			local.Dir = w.Path
			out.Task = &local
			return out, nil
		}
	}
	home, err := gitsnap.WorktreeHome(ctx, g.Dir)
	if err != nil {
		return nil, err
	}
	local.Dir = filepath.Join(home, t.ID)
	if err := gitsnap.WorktreeAdd(ctx, g.Dir, local.Dir, t.Branch, tip); err != nil {
		return nil, fmt.Errorf("bring %s back: %w", t.ID, err)
	}
	out.Task, out.Made = &local, true
	return out, nil
}

// dropBroughtBack removes the worktree and branch a pick made here (the
// branch is merged: its commits are in the target).
func dropBroughtBack(ctx context.Context, b *broughtBack) error {
	if !b.Made {
		return nil
	}
	if err := gitsnap.WorktreeRemove(ctx, b.Task.Origin, b.Task.Dir); err != nil {
		return err
	}
	return gitsnap.DeleteBranch(ctx, b.Task.Origin, b.Task.Branch)
}
