// What this process learnt of the repositories on this machine, so that a
// later call asks git again only what may have changed since.

package gitsnap

import (
	"errors"
	"os"
	"sync"
)

// knownRepo is what does not change while a task works in a directory:
// where its repository is, its index file, its common git directory, and
// where the directory lies in the work tree. HEAD may move (an agent
// commits), so it is never kept.
type knownRepo struct {
	top, gitDir, index, common, prefix string
}

// knownRepos holds, per absolute directory opened on this machine, its
// repository as found by the last rev-parse, and the tree of each snapshot
// this process took or read there (a snapshot's ref is made once, never
// moved: update-ref with an empty old value). A foreground dispatch takes
// the snapshot and, at the turn's end, looks at the files changed since
// (Changed): without them that look starts with a rev-parse of its own.
// Package-level on purpose, as the records cache in package state: it is
// as wide as the process. Bounded: past knownMax entries it starts over.
var knownRepos = &known{}

type known struct {
	mu    sync.Mutex
	repos map[string]knownRepo
	trees map[[2]string]string // {common dir, ref} -> tree
	kept  map[string]keptIndex // a kept index file (Changed's keep) -> what it holds
}

// keptIndex is a kept index file as this process last left it: the work
// tree it is of, the tree it holds, and the file as it was then (git
// replaces an index it changes by a rename, so the same file, size and
// time mean the same index).
type keptIndex struct {
	top, tree string
	file      os.FileInfo
}

// knownMax bounds each of known's maps.
const knownMax = 256

// remember keeps what r says of the directory it was opened at (on this
// machine), and tree as the tree of ref when both are set.
func (k *known) remember(r *repo, ref, tree string) {
	if r.via != nil || r.opened == "" || r.common == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.repos == nil || len(k.repos) >= knownMax {
		k.repos = map[string]knownRepo{}
	}
	k.repos[r.opened] = knownRepo{top: r.top, gitDir: r.gitDir, index: r.index, common: r.common, prefix: r.prefix}
	if ref != "" && tree != "" {
		if k.trees == nil || len(k.trees) >= knownMax {
			k.trees = map[[2]string]string{}
		}
		k.trees[[2]string{r.common, ref}] = tree
	}
}

// changedRepo is what Changed needs of dir and ref, from what this process
// learnt before (nil when it knows not both): the repository without its
// HEAD (headUnknown), its common directory and ref's tree.
func (k *known) changedRepo(dir, ref string) (r *repo, common, tree string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	kr, ok := k.repos[dir]
	if !ok {
		return nil, "", ""
	}
	tree, ok = k.trees[[2]string{kr.common, ref}]
	if !ok {
		return nil, "", ""
	}
	r = &repo{fs: fsOf(nil), top: kr.top, gitDir: kr.gitDir, index: kr.index, prefix: kr.prefix,
		common: kr.common, opened: dir, headUnknown: true}
	return r, kr.common, tree
}

// keep notes that the index file idx (on this machine) holds tree, of the
// work tree at top, as it is now.
func (k *known) keep(top, idx, tree string) {
	fi, err := os.Stat(idx)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		delete(k.kept, idx)
		return
	}
	if k.kept == nil || len(k.kept) >= knownMax {
		k.kept = map[string]keptIndex{}
	}
	k.kept[idx] = keptIndex{top: top, tree: tree, file: fi}
}

// keptTree is the tree the index file idx holds, when it is of the work
// tree at top and still the file keep noted.
func (k *known) keptTree(top, idx string) (string, bool) {
	k.mu.Lock()
	ki, ok := k.kept[idx]
	k.mu.Unlock()
	if !ok || ki.top != top {
		return "", false
	}
	fi, err := os.Stat(idx)
	if err != nil || !os.SameFile(fi, ki.file) || fi.Size() != ki.file.Size() || !fi.ModTime().Equal(ki.file.ModTime()) {
		return "", false
	}
	return ki.tree, true
}

// forget drops what is known of dir (a look on it failed: ask git again
// next time).
func (k *known) forget(dir string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.repos, dir)
}

// errHeadUnknown is a capture that needs HEAD (no index to start from, so
// HEAD's tree is read into a new one) on a repo made without it: the
// caller asks git for it.
var errHeadUnknown = errors.New("HEAD not read")
