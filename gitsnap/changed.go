package gitsnap

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// ChangedFiles is what changed in a work tree since a snapshot: the paths,
// and where they are.
type ChangedFiles struct {
	// Top is the top of the work tree, CommonDir the repository's common
	// git directory (the same for every worktree of a repository).
	Top       string
	CommonDir string
	// Paths are the changed paths (added, modified, deleted), relative to
	// the top, sorted; only dir's when dir is a subdirectory.
	Paths []string
}

// Changed lists the paths that differ between the snapshot ref (a full ref
// name, such as refs/runner/snapshots/<id>) and the work tree in dir
// (tracked and untracked, non-ignored files), read on an index of its own:
// the user's index is not touched. It is what Diff lists, without the stat
// and in three git calls (five the first time), cheap enough to repeat while a task works;
// two when this process took the snapshot or looked at dir before (what
// does not change while a task works is kept: knownRepos).
//
// keep is an index file kept from one call to the next (made from the
// work tree's index the first time), so that a later call hashes only the
// files changed since; "" means a temporary one each time.
func Changed(ctx context.Context, dir, ref, keep string) (*ChangedFiles, error) {
	if abs, err := filepath.Abs(dir); err == nil && viaOf(ctx) == nil {
		if r, common, from := knownRepos.changedRepo(abs, ref); r != nil {
			cf, err := changedOn(ctx, r, common, from, keep)
			if err == nil || ctx.Err() != nil {
				return cf, err
			}
			// Asked again below: its errors say what is wrong.
			knownRepos.forget(abs)
		}
	}
	r, common, from := openChanged(ctx, dir, ref)
	if r == nil {
		// The long way, whose errors say what is wrong (no repository,
		// an unborn HEAD, no such snapshot).
		var err error
		if r, err = open(ctx, dir); err != nil {
			return nil, err
		}
		out, err := r.git(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir", "--verify", "--end-of-options", ref+"^{tree}")
		if err != nil {
			return nil, fmt.Errorf("changed files in %s: snapshot %s: %w", r.top, ref, err)
		}
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) != 2 {
			return nil, fmt.Errorf("changed files in %s: git rev-parse said %q", r.top, out)
		}
		common, from = lines[0], lines[1]
		knownRepos.remember(r, ref, from)
	}
	return changedOn(ctx, r, common, from, keep)
}

// changedOn is Changed in repository r, whose common directory is common,
// from the snapshot's tree from.
func changedOn(ctx context.Context, r *repo, common, from, keep string) (*ChangedFiles, error) {
	var to string
	var err error
	switch ok, ferr := r.fs.existing(ctx, keep); {
	case keep == "":
		to, err = r.captureTree(ctx)
	case ferr == nil && ok[0]:
		to, err = r.treeOnKept(ctx, keep)
	default:
		if to, err = r.captureTreeInto(ctx, keep, r.index); err == nil && r.via == nil {
			knownRepos.keep(r.top, keep, to)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("changed files in %s: %w", r.top, err)
	}
	cf := &ChangedFiles{Top: r.top, CommonDir: common, Paths: []string{}}
	if to == from {
		return cf, nil
	}
	changes, err := r.treeChanges(ctx, from, to, r.scope()...)
	if err != nil {
		return nil, fmt.Errorf("changed files in %s: %w", r.top, err)
	}
	for _, c := range changes {
		cf.Paths = append(cf.Paths, c.Path)
	}
	sort.Strings(cf.Paths)
	return cf, nil
}

// openChanged is open, the repository's common directory and the tree of
// the snapshot ref, in one git call: what Changed needs, when HEAD is born
// and ref names a tree. Otherwise (r nil) Changed asks the long way.
func openChanged(ctx context.Context, dir, ref string) (r *repo, common, tree string) {
	via := viaOf(ctx)
	abs := dir
	if via == nil {
		var err error
		if abs, err = filepath.Abs(dir); err != nil {
			return nil, "", ""
		}
	} else if !filepath.IsAbs(abs) {
		return nil, "", ""
	}
	if !strings.HasPrefix(ref, "refs/") {
		return nil, "", ""
	}
	out, err := run(ctx, call{via: via, dir: abs, args: []string{"rev-parse", "--is-bare-repository", "--absolute-git-dir",
		"--show-toplevel", "--path-format=absolute", "--git-path", "index", "--git-common-dir",
		"HEAD", "HEAD^{tree}", ref + "^{tree}", "--symbolic-full-name", "HEAD"}})
	if err != nil {
		return nil, "", ""
	}
	l := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(l) != 9 || l[0] != "false" {
		return nil, "", ""
	}
	r = &repo{via: via, fs: fsOf(via), gitDir: l[1], top: l[2], index: l[3], common: l[4], head: l[5], headTree: l[6], opened: abs}
	r.setPrefix(abs)
	if strings.HasPrefix(l[8], "refs/") {
		r.headRef = l[8]
	}
	knownRepos.remember(r, ref, l[7])
	return r, l[4], l[7]
}
