package gitsnap

import (
	"context"
	"fmt"
)

// WorkTree is the name Diff gives the current state of the work tree.
const WorkTree = "worktree"

// DiffOptions tune Diff.
type DiffOptions struct {
	// Against is the ID (or unique prefix) of a second snapshot; empty
	// means the current work tree (tracked and untracked, non-ignored files).
	Against string
	// Patch asks for the patch text as well as the stat.
	Patch bool
}

// DiffResult is what changed from a snapshot to the work tree or to another
// snapshot.
type DiffResult struct {
	From  string   `json:"from"` // snapshot ID
	To    string   `json:"to"`   // snapshot ID or "worktree"
	Files []Change `json:"files"`
	Stat  string   `json:"stat"`
	Patch string   `json:"patch,omitempty"`
}

// Diff compares snapshot id with the work tree (or opts.Against) in dir: the
// whole work tree at its top, only dir's files in a subdirectory (a project
// inside a larger repository). The work tree is read on a temporary index; the
// user's index is not touched.
func Diff(ctx context.Context, dir, id string, opts DiffOptions) (*DiffResult, error) {
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	from, err := r.get(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &DiffResult{From: from.ID, To: WorkTree, Files: []Change{}}
	var toTree string
	if opts.Against != "" {
		to, err := r.get(ctx, opts.Against)
		if err != nil {
			return nil, err
		}
		d.To, toTree = to.ID, to.Tree
	} else if toTree, err = r.captureTree(ctx); err != nil {
		return nil, err
	}
	if toTree == from.Tree {
		return d, nil
	}
	if d.Files, err = r.treeChanges(ctx, from.Tree, toTree, r.scope()...); err != nil {
		return nil, err
	}
	common := []string{"diff-tree", "-r", "--no-renames", "--no-ext-diff", "--no-color"}
	out, err := r.git(ctx, append(append(common, "--stat=120", from.Tree, toTree), r.scope()...)...)
	if err != nil {
		return nil, fmt.Errorf("diff snapshot %s: %w", from.ID, err)
	}
	d.Stat = string(out)
	if opts.Patch {
		out, err := r.git(ctx, append(append(common, "-p", "--src-prefix=a/", "--dst-prefix=b/", from.Tree, toTree), r.scope()...)...)
		if err != nil {
			return nil, fmt.Errorf("diff snapshot %s: %w", from.ID, err)
		}
		d.Patch = string(out)
	}
	return d, nil
}
