package gitsnap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/transport"
)

// repo is what one command needs to know about the repository.
type repo struct {
	via      transport.Transport // the machine it is on: nil for this one
	fs       fsys                // that machine's files
	top      string              // absolute top of the work tree
	gitDir   string              // absolute git directory (per worktree)
	index    string              // absolute path of the user's index file
	head     string              // HEAD commit; "" when HEAD is unborn
	headTree string              // HEAD's tree; "" when unborn
	headRef  string              // "refs/heads/<branch>"; "" when HEAD is detached
	// headUnknown: head and headTree were not read (a repo made from
	// what the process knew, see knownRepos); a capture that needs HEAD
	// fails with errHeadUnknown.
	headUnknown bool
	common      string // absolute common git directory
	opened      string // the absolute directory opened, on this machine
	// prefix is the directory that was opened, relative to top, with
	// forward slashes ("" at the top): restore, diff and commit act on it
	// alone when a project is a subdirectory of a larger repository.
	prefix string
	// drivers caches drivers' answer for this repository's operation
	// (set once looked up; nil slice with driversRead: none defined).
	driverCfg   []string
	driversRead bool
}

// setPrefix records where dir (absolute) lies below the top of the work
// tree.
func (r *repo) setPrefix(dir string) {
	real := dir
	if r.via == nil {
		if p, err := filepath.EvalSymlinks(dir); err == nil {
			real = p
		}
	}
	rel, err := filepath.Rel(r.top, real)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return
	}
	r.prefix = filepath.ToSlash(rel)
}

// scope is the pathspec that limits a git command to the opened directory:
// nothing at the top of the work tree.
func (r *repo) scope() []string {
	if r.prefix == "" {
		return nil
	}
	return []string{"--", r.prefix}
}

// open finds the repository containing dir. It fails with errors wrapping
// ErrNotRepo, ErrBareRepo or ErrGitMissing.
func open(ctx context.Context, dir string) (*repo, error) {
	return openOn(ctx, viaOf(ctx), dir)
}

// openOn is open on the machine via stands for (nil: this one; see On),
// where dir must be absolute.
func openOn(ctx context.Context, via transport.Transport, dir string) (*repo, error) {
	abs := dir
	if via == nil {
		var err error
		if abs, err = filepath.Abs(dir); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", dir, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%s is not a directory: %w", abs, ErrNotRepo)
		}
	} else if !filepath.IsAbs(abs) {
		return nil, fmt.Errorf("%s on %s: not an absolute path: %w", dir, via, ErrNotRepo)
	}
	base := []string{"rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-toplevel",
		"--path-format=absolute", "--git-path", "index", "--git-common-dir"}
	out, err := run(ctx, call{via: via, dir: abs, args: append(base, "HEAD", "HEAD^{tree}", "--symbolic-full-name", "HEAD")})
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if err != nil {
		if errors.Is(err, ErrGitMissing) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		var ge *GitError
		switch {
		case len(lines) > 0 && lines[0] == "true":
			return nil, fmt.Errorf("%s: %w", abs, ErrBareRepo)
		case errors.As(err, &ge) && strings.Contains(ge.Stderr, "not a git repository"):
			return nil, fmt.Errorf("%s: %w", abs, ErrNotRepo)
		case errors.As(err, &ge) && strings.Contains(ge.Stderr, "must be run in a work tree"):
			return nil, fmt.Errorf("%s is inside a git directory, not a work tree: %w", abs, ErrNotRepo)
		}
		// Most likely an unborn HEAD: ask again without it.
		out, err2 := run(ctx, call{via: via, dir: abs, args: base})
		if err2 != nil {
			return nil, err
		}
		lines = strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) != 5 {
			return nil, fmt.Errorf("git rev-parse in %s: unexpected output %q", abs, out)
		}
		r := &repo{via: via, fs: fsOf(via), gitDir: lines[1], top: lines[2], index: lines[3], common: lines[4], opened: abs}
		r.setPrefix(abs)
		// HEAD names a branch that has no commit yet (or is broken).
		ref, err3 := run(ctx, call{via: via, dir: abs, args: []string{"symbolic-ref", "-q", "HEAD"}})
		if err3 != nil {
			return nil, fmt.Errorf("read HEAD in %s: %w", abs, err)
		}
		r.headRef = trimOut(ref)
		if _, err3 := run(ctx, call{via: via, dir: abs, args: []string{"rev-parse", "-q", "--verify", r.headRef}}); err3 == nil {
			return nil, err // HEAD is born: the first error was something else
		}
		return r, nil
	}
	if len(lines) != 8 {
		return nil, fmt.Errorf("git rev-parse in %s: unexpected output %q", abs, out)
	}
	if lines[0] == "true" {
		return nil, fmt.Errorf("%s: %w", abs, ErrBareRepo)
	}
	r := &repo{via: via, fs: fsOf(via), gitDir: lines[1], top: lines[2], index: lines[3], common: lines[4], head: lines[5], headTree: lines[6], opened: abs}
	r.setPrefix(abs)
	if strings.HasPrefix(lines[7], "refs/") {
		r.headRef = lines[7]
	}
	knownRepos.remember(r, "", "")
	return r, nil
}

// git runs a git command at the top of the work tree.
func (r *repo) git(ctx context.Context, args ...string) ([]byte, error) {
	return run(ctx, call{via: r.via, dir: r.top, args: args, cfg: r.drivers(ctx, args[0])})
}

// gitIndex runs a git command at the top of the work tree on the given index file.
func (r *repo) gitIndex(ctx context.Context, index string, stdin io.Reader, args ...string) ([]byte, error) {
	return run(ctx, call{via: r.via, dir: r.top, env: []string{"GIT_INDEX_FILE=" + index}, stdin: stdin, args: args, cfg: r.drivers(ctx, args[0])})
}

// branch is the short branch name, "" when detached.
func (r *repo) branch() string { return strings.TrimPrefix(r.headRef, "refs/heads/") }

// captureTree writes the tree of the work tree's current state (tracked
// changes and untracked, non-ignored files) on a temporary index that starts
// as a copy of the user's, so only changed files are hashed.
func (r *repo) captureTree(ctx context.Context) (string, error) {
	return r.captureTreeKept(ctx, "")
}

// captureTreeKept is captureTree, leaving a copy of the index it wrote in
// the file keep when keep is set (see writeTreeKept).
func (r *repo) captureTreeKept(ctx context.Context, keep string) (string, error) {
	tmp, copied, err := r.fs.tempIndex(ctx, r.index)
	if err != nil {
		return "", fmt.Errorf("snapshot %s: temporary index: %w", r.top, err)
	}
	defer r.fs.removeAll(ctx, tmp)
	if err := r.addOn(ctx, tmp+"/index", copied); err != nil {
		return "", err
	}
	return r.writeTreeKept(ctx, tmp+"/index", keep)
}

// writeTreeKept writes the tree of the index file idx (the work tree
// added to it: addOn), leaving a copy of idx in the file keep when keep
// is set (on this machine; best effort): a later Changed with that keep
// starts from it, and, while the work tree is as it was, finds its tree
// without writing one (treeOnKept).
func (r *repo) writeTreeKept(ctx context.Context, idx, keep string) (string, error) {
	out, err := r.gitIndex(ctx, idx, nil, "write-tree")
	if err != nil {
		return "", err
	}
	tree := trimOut(out)
	if keep != "" && r.via == nil {
		if r.fs.mkdirAll(ctx, filepath.Dir(keep)) != nil {
			return tree, nil
		}
		if _, cerr := r.fs.copyIndex(ctx, idx, keep); cerr != nil {
			_ = r.fs.remove(ctx, keep)
			return tree, nil
		}
		knownRepos.keep(r.top, keep, tree)
	}
	return tree, nil
}

// treeOnKept is treeOn on the kept index file keep (Changed's). When keep
// is as this process last left it, and git's add leaves it so (nothing in
// the work tree changed since: git writes no index it did not change),
// its tree is the one noted then, and none is written.
func (r *repo) treeOnKept(ctx context.Context, keep string) (string, error) {
	if _, known := knownRepos.keptTree(r.top, keep); !known || r.via != nil {
		tree, err := r.treeOn(ctx, keep, true)
		if err == nil && r.via == nil {
			knownRepos.keep(r.top, keep, tree)
		}
		return tree, err
	}
	if _, err := r.gitIndex(ctx, keep, nil, "add", "-A"); err != nil {
		return "", err
	}
	if tree, same := knownRepos.keptTree(r.top, keep); same {
		return tree, nil
	}
	out, err := r.gitIndex(ctx, keep, nil, "write-tree")
	if err != nil {
		return "", err
	}
	tree := trimOut(out)
	knownRepos.keep(r.top, keep, tree)
	return tree, nil
}

// captureTreeInto builds the work tree's state in the index file idx,
// starting from a copy of from (if it exists) or HEAD's tree, and returns the
// tree written.
func (r *repo) captureTreeInto(ctx context.Context, idx, from string) (string, error) {
	copied, err := r.fs.copyIndex(ctx, from, idx)
	if err != nil {
		return "", fmt.Errorf("snapshot %s: %w", r.top, err)
	}
	return r.treeOn(ctx, idx, copied)
}

// treeOn finishes captureTreeInto on idx: HEAD's tree read into it when it
// is not a copy of an index, the work tree added, the tree written.
func (r *repo) treeOn(ctx context.Context, idx string, copied bool) (string, error) {
	if err := r.addOn(ctx, idx, copied); err != nil {
		return "", err
	}
	return r.writeTree(ctx, idx)
}

// addOn adds the work tree's state to the index file idx, HEAD's tree
// read into it first when it is not a copy of an index.
func (r *repo) addOn(ctx context.Context, idx string, copied bool) error {
	if !copied && r.headUnknown {
		return errHeadUnknown
	}
	if !copied && r.head != "" {
		if _, err := r.gitIndex(ctx, idx, nil, "read-tree", r.head); err != nil {
			return err
		}
	}
	_, err := r.gitIndex(ctx, idx, nil, "add", "-A")
	return err
}

// writeTree writes the tree of the index file idx.
func (r *repo) writeTree(ctx context.Context, idx string) (string, error) {
	out, err := r.gitIndex(ctx, idx, nil, "write-tree")
	if err != nil {
		return "", err
	}
	return trimOut(out), nil
}

// scopedTree is the tree a commit of the work tree records: the whole work
// tree's state (as captureTree) at the top; in a subdirectory, HEAD's tree
// with only that directory's files taken from the work tree.
func (r *repo) scopedTree(ctx context.Context) (string, error) {
	if r.prefix == "" {
		return r.captureTree(ctx)
	}
	tmp, err := r.fs.tempDir(ctx)
	if err != nil {
		return "", fmt.Errorf("commit %s: temporary index: %w", r.top, err)
	}
	defer r.fs.removeAll(ctx, tmp)
	idx := tmp + "/index"
	if r.head != "" {
		if _, err := r.gitIndex(ctx, idx, nil, "read-tree", r.head); err != nil {
			return "", err
		}
	}
	if _, err := r.gitIndex(ctx, idx, nil, append([]string{"add", "-A"}, r.scope()...)...); err != nil {
		return "", err
	}
	out, err := r.gitIndex(ctx, idx, nil, "write-tree")
	if err != nil {
		return "", err
	}
	return trimOut(out), nil
}

// runVia runs a command (not git) on the machine via stands for and
// returns its stdout; a failure carries its stderr.
func runVia(ctx context.Context, via transport.Transport, argv ...string) ([]byte, error) {
	if r, ok := via.(transport.Runner); ok {
		stdout, stderr, code, err := r.Run(ctx, nil, argv...)
		if err == nil && code != 0 {
			err = fmt.Errorf("%s: exit status %d: %s", argv[0], code, strings.TrimSpace(string(stderr)))
		}
		return stdout, err
	}
	out, err := via.Command(ctx, argv...).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		err = fmt.Errorf("%s: %w: %s", argv[0], err, strings.TrimSpace(string(ee.Stderr)))
	}
	return out, err
}
