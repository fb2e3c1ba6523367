package gitsnap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/clock"
)

const gitlinkMode = "160000"

// RestoreResult says what Restore did.
type RestoreResult struct {
	// Snapshot is the snapshot restored.
	Snapshot *Snapshot `json:"snapshot"`
	// Undo is the snapshot of the state just before the restore; restoring
	// it undoes the restore.
	Undo *Snapshot `json:"undo"`
	// Changes are the paths the restore wrote or removed.
	Changes []Change `json:"changes"`
	// Skipped are submodule (gitlink) changes that were not applied:
	// submodules are recorded, never recursed into.
	Skipped []Change `json:"skipped,omitempty"`
}

// Restore makes the non-ignored files of dir exactly those of snapshot id:
// files created since are removed, deleted ones come back, contents, modes
// and symlinks are the snapshot's. When dir is a subdirectory of its
// repository (a project inside a larger one), files outside it are left
// as they are. HEAD, the branch,
// the index and ignored files are left alone. The current state is
// snapshot first (RestoreResult.Undo), so a restore can itself be undone.
func Restore(ctx context.Context, dir, id string) (*RestoreResult, error) {
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	snap, err := r.get(ctx, id)
	if err != nil {
		return nil, err
	}
	undo, err := r.take(ctx, NewID(), "before restore of "+snap.ID, clock.Now(), "")
	if err != nil {
		return nil, fmt.Errorf("restore %s: snapshot the current state first: %w", snap.ID, err)
	}
	res := &RestoreResult{Snapshot: snap, Undo: undo, Changes: []Change{}}
	if undo.Tree == snap.Tree {
		return res, nil
	}
	changes, err := r.treeChanges(ctx, undo.Tree, snap.Tree, r.scope()...)
	if err != nil {
		return nil, err
	}
	var write, gone []string
	for _, ch := range changes {
		if !safePath(ch.Path) {
			return nil, fmt.Errorf("restore %s: refusing unsafe path %q in the snapshot", snap.ID, ch.Path)
		}
		if ch.OldMode == gitlinkMode || ch.NewMode == gitlinkMode {
			res.Skipped = append(res.Skipped, ch)
			continue
		}
		res.Changes = append(res.Changes, ch)
		if ch.Status == "D" {
			gone = append(gone, ch.Path)
			continue
		}
		write = append(write, ch.Path)
	}
	if err := r.fs.removeFiles(ctx, r.top, gone); err != nil {
		return nil, fmt.Errorf("restore %s: %w (undo with 'runner snapshot restore %s')", snap.ID, err, undo.ID)
	}
	if len(write) > 0 {
		if err := r.checkout(ctx, snap.Tree, write); err != nil {
			return nil, fmt.Errorf("restore %s: %w (undo with 'runner snapshot restore %s')", snap.ID, err, undo.ID)
		}
	}
	return res, nil
}

// checkout writes paths of tree into the work tree, overwriting what is
// there, through a temporary index.
func (r *repo) checkout(ctx context.Context, tree string, paths []string) error {
	tmp, err := r.fs.tempDir(ctx)
	if err != nil {
		return fmt.Errorf("temporary index: %w", err)
	}
	defer r.fs.removeAll(ctx, tmp)
	idx := tmp + "/index"
	if _, err := r.gitIndex(ctx, idx, nil, "read-tree", tree); err != nil {
		return err
	}
	in := strings.Join(paths, "\x00") + "\x00"
	_, err = r.gitIndex(ctx, idx, strings.NewReader(in), "checkout-index", "-f", "-z", "--stdin")
	return err
}

// removeFile removes top/path and then its parent directories up to top
// while they are empty.
func removeFile(top, path string) error {
	full := filepath.Join(top, filepath.FromSlash(path))
	if err := os.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", full, err)
	}
	for d := filepath.Dir(full); d != top && strings.HasPrefix(d, top); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break // not empty (or gone): stop
		}
	}
	return nil
}

// safePath rejects paths that could leave the work tree or touch .git.
func safePath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." || strings.EqualFold(part, ".git") {
			return false
		}
	}
	return true
}
