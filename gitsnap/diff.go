package gitsnap

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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
	// Lines asks for the lines added and deleted (Insertions, Deletions).
	Lines bool
}

// DiffResult is what changed from a snapshot to the work tree or to another
// snapshot.
type DiffResult struct {
	From  string   `json:"from"` // snapshot ID
	To    string   `json:"to"`   // snapshot ID or "worktree"
	Files []Change `json:"files"`
	Stat  string   `json:"stat"`
	Patch string   `json:"patch,omitempty"`
	// Insertions and Deletions count lines (DiffOptions.Lines; a binary
	// file counts none).
	Insertions int `json:"insertions"`
	Deletions  int `json:"deletions"`
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
	if opts.Lines {
		if d.Insertions, d.Deletions, err = r.numstat(ctx, from.Tree, toTree); err != nil {
			return nil, fmt.Errorf("diff snapshot %s: %w", from.ID, err)
		}
	}
	if opts.Patch {
		out, err := r.git(ctx, append(append(common, "-p", "--src-prefix=a/", "--dst-prefix=b/", from.Tree, toTree), r.scope()...)...)
		if err != nil {
			return nil, fmt.Errorf("diff snapshot %s: %w", from.ID, err)
		}
		d.Patch = string(out)
	}
	return d, nil
}

// numstat counts the lines added and deleted from tree a to tree b.
func (r *repo) numstat(ctx context.Context, a, b string) (ins, del int, err error) {
	out, err := r.git(ctx, append([]string{"diff-tree", "-r", "--no-renames", "--no-ext-diff", "--numstat", a, b}, r.scope()...)...)
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		i, _ := strconv.Atoi(f[0]) // "-" for a binary file: none
		d, _ := strconv.Atoi(f[1])
		ins, del = ins+i, del+d
	}
	return ins, del, nil
}

// Between is how the work tree in dirB differs from the one in dirA (two
// worktrees of one repository, such as two candidates of a group): the
// files, the stat and the patch, each tree read on a temporary index (no
// index of theirs touched). From and To are the directories.
func Between(ctx context.Context, dirA, dirB string) (*DiffResult, error) {
	ra, err := open(ctx, dirA)
	if err != nil {
		return nil, err
	}
	rb, err := open(ctx, dirB)
	if err != nil {
		return nil, err
	}
	ta, err := ra.captureTree(ctx)
	if err != nil {
		return nil, err
	}
	tb, err := rb.captureTree(ctx)
	if err != nil {
		return nil, err
	}
	d := &DiffResult{From: dirA, To: dirB, Files: []Change{}}
	if ta == tb {
		return d, nil
	}
	if d.Files, err = ra.treeChanges(ctx, ta, tb, ra.scope()...); err != nil {
		return nil, err
	}
	common := []string{"diff-tree", "-r", "--no-renames", "--no-ext-diff", "--no-color"}
	out, err := ra.git(ctx, append(append(common, "--stat=120", ta, tb), ra.scope()...)...)
	if err != nil {
		return nil, fmt.Errorf("diff %s against %s: %w", dirB, dirA, err)
	}
	d.Stat = string(out)
	if d.Insertions, d.Deletions, err = ra.numstat(ctx, ta, tb); err != nil {
		return nil, err
	}
	out, err = ra.git(ctx, append(append(common, "-p", "--src-prefix=a/", "--dst-prefix=b/", ta, tb), ra.scope()...)...)
	if err != nil {
		return nil, fmt.Errorf("diff %s against %s: %w", dirB, dirA, err)
	}
	d.Patch = string(out)
	return d, nil
}
