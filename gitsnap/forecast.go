package gitsnap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ForecastBranch is one branch whose merge MergeForecast predicts.
type ForecastBranch struct {
	// Branch is the branch's name, without refs/heads/ (runner/<task id>).
	Branch string
	// Worktree is where the branch is checked out ("" for nowhere): what
	// is uncommitted there counts, as runner merge commits it first. A
	// directory that is gone, or has another branch checked out, is
	// ignored.
	Worktree string
	// Base is the commit (or ref) the branch's own changes start after:
	// the task's snapshot, so the user's uncommitted work it carried does
	// not count, as in Merge. "" or not an ancestor of the branch: where
	// the branch left the target (git's merge base), as Merge falls back to.
	Base string
}

// Forecast is what merging each of a few branches into one target would
// do, computed without touching any work tree, index, ref, HEAD or stash.
type Forecast struct {
	Into     string           `json:"into"`   // the target branch ("HEAD" when detached)
	Target   string           `json:"target"` // its commit
	Branches []BranchForecast `json:"branches"`
}

// BranchForecast is the forecast of one branch.
type BranchForecast struct {
	Branch string `json:"branch"`
	// UpToDate is set when merging it would not change the target: nothing
	// to merge (so it takes no part in the pairs).
	UpToDate bool `json:"up_to_date,omitempty"`
	// Conflicts are the files merging it into the target alone conflicts on.
	Conflicts []string `json:"conflicts,omitempty"`
	// With are the other branches, each merging cleanly alone, with which
	// it conflicts: whichever of the two is merged second stops.
	With []PairConflict `json:"with,omitempty"`
}

// Clean reports whether the branch merges into the target without a
// conflict, alone and after any other of the forecast's branches.
func (b BranchForecast) Clean() bool { return len(b.Conflicts) == 0 && len(b.With) == 0 }

// PairConflict names another branch and the files both change in ways
// that conflict.
type PairConflict struct {
	Branch string   `json:"branch"`
	Files  []string `json:"files"`
}

// MissingBranchError is a branch a forecast was asked about that does not
// exist: one of the branches, or the target (Target). It wraps ErrNoBranch.
type MissingBranchError struct {
	Branch, Dir string
	Target      bool
}

// Error names the branch and the repository.
func (e *MissingBranchError) Error() string {
	if e.Target {
		return fmt.Sprintf("merge forecast: no branch %s to merge into in %s (see git branch)", e.Branch, e.Dir)
	}
	return fmt.Sprintf("merge forecast: no branch %s in %s (deleted? see git branch --list 'runner/*')", e.Branch, e.Dir)
}

// Unwrap makes errors.Is(err, ErrNoBranch) true.
func (e *MissingBranchError) Unwrap() error { return ErrNoBranch }

// scratchEnv makes the commits a forecast needs the same bytes every time
// (an identity and dates of their own), so forecasting again writes no new
// objects and no identity is needed.
// (A function: an append at package level runs in every process's init.)
func scratchEnv() []string {
	return append([]string{"GIT_AUTHOR_DATE=@0 +0000", "GIT_COMMITTER_DATE=@0 +0000"}, fallbackIdentity...)
}

// MergeForecast predicts, for each branch, whether merging it into into
// (a branch; "" for the one checked out in dir) conflicts, on which files,
// and with which of the other branches it conflicts pairwise (both clean
// alone; the target with one merged, then the other). Nothing of the
// user's is touched: the merges are git merge-tree --write-tree runs (one
// process for all of a phase), on scratch commits that exist only as
// objects (unreferenced: git gc removes them). A branch that does not
// exist is ErrNoBranch; a repository without a commit, an error.
//
// The forecast merges the branch's changes since Base in one step, where
// runner merge rebases them commit by commit: a conflict met and undone
// within the branch's own history can stop the real merge and not this.
func MergeForecast(ctx context.Context, dir, into string, branches []ForecastBranch) (*Forecast, error) {
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	fc, targetTree, err := r.forecastTarget(ctx, into)
	if err != nil {
		return nil, err
	}
	tips, err := r.branchTips(ctx)
	if err != nil {
		return nil, err
	}
	lines := make([]string, len(branches))
	err = each(len(branches), func(i int) (err error) {
		lines[i], err = r.forecastLine(ctx, branches[i], tips, fc.Target, targetTree)
		return err
	})
	if err != nil {
		return nil, err
	}
	alone, err := r.mergeTrees(ctx, lines)
	if err != nil {
		return nil, err
	}
	fc.Branches = make([]BranchForecast, len(branches))
	for i, b := range branches {
		fc.Branches[i] = BranchForecast{Branch: b.Branch, Conflicts: alone[i].files, UpToDate: alone[i].clean && alone[i].tree == targetTree}
	}
	if err := r.forecastPairs(ctx, fc, alone); err != nil {
		return nil, err
	}
	return fc, nil
}

// forecastTarget resolves the target of a forecast and its tree.
func (r *repo) forecastTarget(ctx context.Context, into string) (*Forecast, string, error) {
	if into == "" {
		if r.head == "" {
			return nil, "", fmt.Errorf("merge forecast in %s: HEAD has no commit yet: nothing to merge into (commit something first)", r.top)
		}
		name := r.branch()
		if name == "" {
			name = "HEAD"
		}
		return &Forecast{Into: name, Target: r.head}, r.headTree, nil
	}
	out, err := r.git(ctx, "rev-parse", "refs/heads/"+into+"^{commit}", "refs/heads/"+into+"^{tree}", "--")
	if err != nil {
		return nil, "", &MissingBranchError{Branch: into, Dir: r.top, Target: true}
	}
	f := strings.Fields(string(out)) // the two IDs, then the "--"
	if len(f) != 3 {
		return nil, "", fmt.Errorf("git rev-parse %s in %s: unexpected output %q", into, r.top, out)
	}
	return &Forecast{Into: into, Target: f[0]}, f[1], nil
}

// tip is a branch's commit and tree.
type tip struct{ commit, tree string }

// branchTips lists every local branch's commit and tree, in one git call.
func (r *repo) branchTips(ctx context.Context) (map[string]tip, error) {
	out, err := r.git(ctx, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(tree)", "refs/heads/")
	if err != nil {
		return nil, fmt.Errorf("list the branches of %s: %w", r.top, err)
	}
	tips := map[string]tip{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Split(l, "\x00")
		if len(f) == 3 {
			tips[strings.TrimPrefix(f[0], "refs/heads/")] = tip{commit: f[1], tree: f[2]}
		}
	}
	return tips, nil
}

// forecastLine is the merge-tree --stdin line that merges b into the
// target: "OURS THEIRS", where THEIRS is the branch's tip (with its work
// tree's uncommitted changes on top, as a scratch commit) and OURS the
// target itself, or, when b.Base is an ancestor of the tip, a scratch
// commit of the target's tree on b.Base: git then takes b.Base as the
// merge base (git 2.39 has no merge-tree --merge-base).
func (r *repo) forecastLine(ctx context.Context, b ForecastBranch, tips map[string]tip, target, targetTree string) (string, error) {
	t, ok := tips[b.Branch]
	if !ok {
		return "", &MissingBranchError{Branch: b.Branch, Dir: r.top}
	}
	theirs, err := r.withUncommitted(ctx, b, t)
	if err != nil {
		return "", err
	}
	ours := target
	if b.Base != "" {
		if _, err := r.git(ctx, "merge-base", "--is-ancestor", b.Base, theirs); err == nil {
			if ours, err = r.scratchCommit(ctx, targetTree, b.Base); err != nil {
				return "", err
			}
		}
	}
	return ours + " " + theirs, nil
}

// withUncommitted is the commit that stands for branch b: its tip, or,
// when its work tree has uncommitted changes, a scratch commit of them on
// the tip.
func (r *repo) withUncommitted(ctx context.Context, b ForecastBranch, t tip) (string, error) {
	if b.Worktree == "" {
		return t.commit, nil
	}
	w, err := open(ctx, b.Worktree)
	if errors.Is(err, ErrNotRepo) {
		return t.commit, nil // the directory is gone: the branch is all there is
	}
	if err != nil {
		return "", fmt.Errorf("merge forecast: the work tree of %s: %w", b.Branch, err)
	}
	if w.headRef != "refs/heads/"+b.Branch {
		return t.commit, nil
	}
	tree, err := w.captureTree(ctx)
	if err != nil {
		return "", fmt.Errorf("merge forecast: the uncommitted changes in %s: %w", b.Worktree, err)
	}
	if tree == t.tree {
		return t.commit, nil
	}
	return r.scratchCommit(ctx, tree, t.commit)
}

// scratchCommit writes a commit object of tree on parent, referenced by
// nothing, the same bytes for the same tree and parent.
func (r *repo) scratchCommit(ctx context.Context, tree, parent string) (string, error) {
	out, err := run(ctx, call{via: r.via, dir: r.top, env: scratchEnv(), stdin: strings.NewReader("runner merge forecast\n"),
		args: []string{"commit-tree", "--no-gpg-sign", tree, "-p", parent, "-F", "-"}})
	if err != nil {
		return "", fmt.Errorf("merge forecast: a scratch commit in %s: %w", r.top, err)
	}
	return trimOut(out), nil
}

// forecastPairs fills the pairwise conflicts of fc: each branch that
// merges cleanly alone becomes a scratch commit of its merged tree on the
// target, and every two of those are merged (their merge base is the
// target), in one merge-tree run.
func (r *repo) forecastPairs(ctx context.Context, fc *Forecast, alone []mergeOutcome) error {
	var idx []int
	for i, o := range alone {
		if o.clean && !fc.Branches[i].UpToDate {
			idx = append(idx, i)
		}
	}
	commits := make([]string, len(idx))
	err := each(len(idx), func(k int) (err error) {
		commits[k], err = r.scratchCommit(ctx, alone[idx[k]].tree, fc.Target)
		return err
	})
	if err != nil {
		return err
	}
	var lines []string
	var pairs [][2]int
	for a := range idx {
		for b := a + 1; b < len(idx); b++ {
			lines = append(lines, commits[a]+" "+commits[b])
			pairs = append(pairs, [2]int{idx[a], idx[b]})
		}
	}
	both, err := r.mergeTrees(ctx, lines)
	if err != nil {
		return err
	}
	for k, o := range both {
		if o.clean {
			continue
		}
		i, j := pairs[k][0], pairs[k][1]
		fc.Branches[i].With = append(fc.Branches[i].With, PairConflict{Branch: fc.Branches[j].Branch, Files: o.files})
		fc.Branches[j].With = append(fc.Branches[j].With, PairConflict{Branch: fc.Branches[i].Branch, Files: o.files})
	}
	return nil
}

// forecastWorkers bounds the git processes a forecast runs at once (a few
// per branch before the merges: its work tree's state, its merge base).
const forecastWorkers = 4

// each calls f(0) … f(n-1), at most forecastWorkers at once, and returns
// the first error.
func each(n int, f func(i int) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, forecastWorkers) {
		wg.Go(func() {
			for i := range next {
				errs[i] = f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(slices.DeleteFunc(errs, func(e error) bool { return e == nil })...)
}

// mergeOutcome is one merge of merge-tree --stdin.
type mergeOutcome struct {
	clean bool
	tree  string
	files []string // the conflicted paths
}

// mergeTrees runs git merge-tree --write-tree --stdin on lines of "OURS
// THEIRS" (commit IDs only: no user text reaches its input) and returns
// each merge's outcome, in order. Nothing but objects is written.
func (r *repo) mergeTrees(ctx context.Context, lines []string) ([]mergeOutcome, error) {
	if len(lines) == 0 {
		return nil, nil
	}
	in := strings.Join(lines, "\n") + "\n"
	out, err := run(ctx, call{via: r.via, dir: r.top, stdin: strings.NewReader(in), cfg: r.drivers(ctx, "merge-tree"),
		args: []string{"merge-tree", "--write-tree", "--stdin", "-z", "--name-only", "--no-messages"}})
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "usage: git merge-tree") {
			return nil, fmt.Errorf("merge forecast in %s needs git 2.38 or newer (merge-tree --write-tree --stdin): %w", r.top, err)
		}
		return nil, fmt.Errorf("merge forecast in %s: %w", r.top, err)
	}
	res, err := parseMergeTree(out)
	if err == nil && len(res) != len(lines) {
		err = fmt.Errorf("%d results for %d merges", len(res), len(lines))
	}
	if err != nil {
		return nil, fmt.Errorf("git merge-tree --stdin in %s: %w", r.top, err)
	}
	return res, nil
}

// parseMergeTree reads the output of merge-tree --write-tree --stdin -z
// --name-only --no-messages: per merge, "STATUS\0TREE\0" then the
// conflicted paths, each ending in NUL, then one more NUL. STATUS is 1 for
// clean, 0 for conflicts, negative when the merge could not run.
func parseMergeTree(out []byte) ([]mergeOutcome, error) {
	f := bytes.Split(out, []byte{0})
	var res []mergeOutcome
	for i := 0; i+1 < len(f); {
		status, tree := string(f[i]), string(f[i+1])
		if status != "0" && status != "1" {
			return nil, fmt.Errorf("merge %d could not run (status %q)", len(res)+1, status)
		}
		o := mergeOutcome{clean: status == "1", tree: tree}
		for i += 2; i < len(f) && len(f[i]) > 0; i++ {
			o.files = append(o.files, string(f[i]))
		}
		i++ // the NUL that ends the merge
		res = append(res, o)
	}
	return res, nil
}
