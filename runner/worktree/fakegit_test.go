package worktree

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// fakeGit is a Git in memory: each repository's worktrees by its
// directory, the snapshots' commits by task id, the branches merged, the
// work trees with changes; an error set fails its operation. calls
// records each operation as "op arg…".
type fakeGit struct {
	mu           sync.Mutex
	worktrees    map[string][]gitsnap.Worktree
	worktreesErr map[string]error
	snaps        map[string]string
	merged       map[string]bool
	dirty        map[string]bool
	dirtyErr     error
	commitErr    error
	mergeErr     error
	forecast     *gitsnap.Forecast
	forecastErr  error
	diff         *gitsnap.DiffResult
	diffErr      error
	diffMissing  int // the first so many diffs find no snapshot (its commit under way)
	calls        []string
}

var _ Git = (*fakeGit)(nil)

func (g *fakeGit) called(op string, args ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, strings.Join(append([]string{op}, args...), " "))
}

func (g *fakeGit) Worktrees(ctx context.Context, dir, prefix string) ([]gitsnap.Worktree, error) {
	g.called("worktrees", dir, prefix)
	if err := g.worktreesErr[dir]; err != nil {
		return nil, err
	}
	return g.worktrees[dir], nil
}

func (g *fakeGit) Snapshot(ctx context.Context, dir, id string) (*gitsnap.Snapshot, error) {
	g.called("snapshot", dir, id)
	c, ok := g.snaps[id]
	if !ok {
		return nil, fmt.Errorf("no snapshot %s in %s", id, dir)
	}
	return &gitsnap.Snapshot{ID: id, Commit: c}, nil
}

func (g *fakeGit) BranchMerged(ctx context.Context, dir, branch, base string) (bool, error) {
	g.called("merged?", dir, branch, "base="+base)
	return g.merged[branch], nil
}

func (g *fakeGit) Dirty(ctx context.Context, dir string) (bool, error) {
	g.called("dirty?", dir)
	return g.dirty[dir], g.dirtyErr
}

func (g *fakeGit) Commit(ctx context.Context, dir string, opts gitsnap.CommitOptions) (*gitsnap.CommitResult, error) {
	g.called("commit", dir, opts.TaskID, fmt.Sprint("all=", opts.All))
	if g.commitErr != nil {
		return nil, g.commitErr
	}
	return &gitsnap.CommitResult{Outcome: gitsnap.CommitOutcome("nothing")}, nil
}

func (g *fakeGit) Merge(ctx context.Context, dir, wt, branch string, opts gitsnap.MergeOptions) (*gitsnap.MergeResult, error) {
	g.called("merge", dir, wt, branch, "base="+opts.Base, "into="+opts.Into, "msg="+strings.SplitN(opts.Message, "\n", 2)[0])
	if g.mergeErr != nil {
		return nil, g.mergeErr
	}
	return &gitsnap.MergeResult{Branch: branch, Into: "main", Commit: "c9", Mode: "merge"}, nil
}

func (g *fakeGit) MergeForecast(ctx context.Context, dir, into string, branches []gitsnap.ForecastBranch) (*gitsnap.Forecast, error) {
	var names []string
	for _, b := range branches {
		names = append(names, b.Branch+"@"+b.Worktree+"<"+b.Base)
	}
	g.called("forecast", dir, "into="+into, strings.Join(names, ","))
	if g.forecastErr != nil {
		return nil, g.forecastErr
	}
	return g.forecast, nil
}

func (g *fakeGit) Diff(ctx context.Context, dir, id string, opts gitsnap.DiffOptions) (*gitsnap.DiffResult, error) {
	g.called("diff", dir, id, fmt.Sprint("patch=", opts.Patch))
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.diffMissing > 0 {
		g.diffMissing--
		return nil, fmt.Errorf("snapshot %s: %w", id, gitsnap.ErrNotFound)
	}
	return g.diff, g.diffErr
}

// fakeNow is the fakes' clock: fixed for the run, taken from runner's
// clock (never a written date, which ages).
var fakeNow = clock.Now().Truncate(time.Second)

// fakeGitDeps is Deps over st and git, with host "gone" unreachable.
func fakeGitDeps(t *testing.T, st *state.State, git *fakeGit) (Deps, *memStore, *journal) {
	store, log := &memStore{st: st}, &journal{}
	gitOn := func(ctx context.Context, host string) (context.Context, error) {
		if host == "gone" {
			return nil, errors.New("host gone: unreachable")
		}
		return ctx, nil
	}
	return Deps{Store: store, Record: log, Core: memCore{store}, Git: git,
		Now:        func() time.Time { return fakeNow },
		Warn:       func(format string, args ...any) { t.Logf("warn: "+format, args...) },
		GitContext: func(ctx context.Context, x *state.Task) (context.Context, error) { return gitOn(ctx, x.Tmux.Host) },
		GitOn:      gitOn,
	}, store, log
}

// doneTask is task id of project api done in worktree /wt/id of /src/api.
func doneTask(id string) *state.Task {
	return &state.Task{ID: id, Project: "api", Text: "change " + id, Status: state.StatusDone,
		Dir: "/wt/" + id, Origin: "/src/api", Branch: gitsnap.BranchPrefix + id}
}

// TestListThroughGit: what List makes of git's answers: merged only with
// no uncommitted work (a gone worktree is not looked into), the base of a
// task's branch its snapshot, a worktree no task names listed too, a
// repository two projects share listed once, a repository or host that
// cannot be read left out, a forecast that fails said on each.
func TestListThroughGit(t *testing.T) {
	st := state.New()
	st.Projects["api"] = &state.Project{Name: "api", Dir: "/src/api"}
	st.Projects["sub"] = &state.Project{Name: "sub", Dir: "/src/api/sub"} // the same repository
	st.Projects["far"] = &state.Project{Name: "far", Dir: "/srv/far", Host: "gone"}
	st.Projects["odd"] = &state.Project{Name: "odd", Dir: "/src/odd"}
	for _, id := range []string{"t_aaaa0001", "t_aaaa0002", "t_aaaa0003"} {
		st.Tasks[id] = doneTask(id)
	}
	wt := func(id string, gone bool) gitsnap.Worktree {
		return gitsnap.Worktree{Path: "/wt/" + id, Branch: gitsnap.BranchPrefix + id, Prunable: gone}
	}
	api := []gitsnap.Worktree{wt("t_aaaa0001", false), wt("t_aaaa0002", false), wt("t_aaaa0003", true), wt("t_lost0004", false)}
	git := &fakeGit{
		worktrees:    map[string][]gitsnap.Worktree{"/src/api": api, "/src/api/sub": api},
		worktreesErr: map[string]error{"/src/odd": gitsnap.ErrNotRepo},
		snaps:        map[string]string{"t_aaaa0001": "c1", "t_aaaa0002": "c2", "t_aaaa0003": "c3"},
		merged:       map[string]bool{"runner/t_aaaa0001": true, "runner/t_aaaa0002": true, "runner/t_aaaa0003": true},
		dirty:        map[string]bool{"/wt/t_aaaa0002": true},
		forecastErr:  errors.New("merge-tree: out of memory"),
	}
	d, _, _ := fakeGitDeps(t, st, git)
	list, err := List(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range list {
		got = append(got, fmt.Sprintf("%s %s merged=%v gone=%v origin=%s", i.Task, i.Branch, i.Merged, i.Gone, i.Origin))
		if !strings.Contains(i.ForecastError, "out of memory") || i.Forecast != nil {
			t.Errorf("%s: forecast %v, error %q; want the forecast's error", i.Branch, i.Forecast, i.ForecastError)
		}
	}
	want := []string{
		"t_aaaa0001 runner/t_aaaa0001 merged=true gone=false origin=/src/api",
		"t_aaaa0002 runner/t_aaaa0002 merged=false gone=false origin=/src/api", // merged, but work left uncommitted
		"t_aaaa0003 runner/t_aaaa0003 merged=true gone=true origin=/src/api",
		" runner/t_lost0004 merged=false gone=false origin=/src/api", // no record names it
	}
	if !slices.Equal(got, want) {
		t.Errorf("List:\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	for _, c := range []string{"merged? /src/api runner/t_aaaa0001 base=c1", "merged? /src/api runner/t_lost0004 base=", "dirty? /wt/t_aaaa0001"} {
		if !slices.Contains(git.calls, c) {
			t.Errorf("no call %q in %q", c, git.calls)
		}
	}
	if slices.Contains(git.calls, "dirty? /wt/t_aaaa0003") {
		t.Error("the work tree of a gone worktree was looked into")
	}
	git.dirtyErr = errors.New("git status: index.lock")
	if list, _ = List(t.Context(), d); list[0].Merged {
		t.Error("a work tree whose changes could not be read counts as merged")
	}
}

// TestMergeThroughGit: a merge commits what the agent left in the task's
// worktree, then merges its branch from its snapshot's commit into the
// branch asked, with the task's headline; what git refuses comes back as
// the kind of error it is, and nothing is recorded.
func TestMergeThroughGit(t *testing.T) {
	st := state.New()
	st.Tasks["t_aaaa0001"] = doneTask("t_aaaa0001")
	git := &fakeGit{snaps: map[string]string{"t_aaaa0001": "c1"}}
	d, store, log := fakeGitDeps(t, st, git)
	if _, res, err := Merge(t.Context(), d, MergeRequest{Ref: "t_aaaa0001", Into: "release"}); err != nil || res.Commit != "c9" {
		t.Fatalf("Merge = %+v, %v", res, err)
	}
	want := []string{
		"commit /wt/t_aaaa0001 t_aaaa0001 all=true",
		"snapshot /src/api t_aaaa0001",
		"merge /src/api /wt/t_aaaa0001 runner/t_aaaa0001 base=c1 into=release msg=Merge runner/t_aaaa0001: change t_aaaa0001",
	}
	if !slices.Equal(git.calls, want) {
		t.Errorf("git calls:\n %s\nwant\n %s", strings.Join(git.calls, "\n "), strings.Join(want, "\n "))
	}
	if store.updates != 1 || len(log.events) != 1 {
		t.Errorf("%d updates, journal %q; want the overlaps cleared and one entry", store.updates, log.events)
	}
	for _, c := range []struct {
		name  string
		set   func(*fakeGit)
		kind  error
		usage bool
		text  string
	}{
		{"the commit fails", func(g *fakeGit) { g.commitErr = errors.New("disk full") }, nil, false, "commit what the agent left in /wt/t_aaaa0001: disk full"},
		{"no snapshot", func(g *fakeGit) { g.snaps = nil }, nil, false, "its snapshot: no snapshot t_aaaa0001"},
		{"a conflict", func(g *fakeGit) { g.mergeErr = &gitsnap.ConflictError{Files: []string{"a.txt"}} }, ErrConflict, false, "a.txt"},
		{"local changes", func(g *fakeGit) { g.mergeErr = fmt.Errorf("a.txt: %w", gitsnap.ErrLocalChanges) }, fault.ErrUsage, true, "a.txt"},
		{"a detached HEAD", func(g *fakeGit) { g.mergeErr = gitsnap.ErrDetachedHead }, fault.ErrUsage, true, ""},
		{"a merge in progress", func(g *fakeGit) { g.mergeErr = gitsnap.ErrInProgress }, fault.ErrUsage, true, ""},
		{"another failure", func(g *fakeGit) { g.mergeErr = errors.New("fatal: bad object") }, nil, false, "bad object"},
	} {
		git := &fakeGit{snaps: map[string]string{"t_aaaa0001": "c1"}}
		c.set(git)
		d, store, log := fakeGitDeps(t, st, git)
		_, res, err := Merge(t.Context(), d, MergeRequest{Ref: "t_aaaa0001"})
		switch {
		case err == nil || res != nil:
			t.Errorf("%s: Merge = %+v, %v; want an error", c.name, res, err)
		case c.kind != nil && !errors.Is(err, c.kind):
			t.Errorf("%s: err = %v, want %v", c.name, err, c.kind)
		case errors.Is(err, fault.ErrUsage) != c.usage:
			t.Errorf("%s: err = %v, usage error %v, want %v", c.name, err, !c.usage, c.usage)
		case !strings.Contains(err.Error(), c.text):
			t.Errorf("%s: err = %v, want it to say %q", c.name, err, c.text)
		}
		if store.updates != 0 || len(log.events) != 0 {
			t.Errorf("%s: %d updates, journal %q; want nothing recorded", c.name, store.updates, log.events)
		}
	}
}

// TestCheckMergeThroughGit: the forecast's question names the task's
// branch even when its worktree is gone, and what git answers becomes the
// kind of error it is.
func TestCheckMergeThroughGit(t *testing.T) {
	st := state.New()
	st.Tasks["t_aaaa0001"] = doneTask("t_aaaa0001")
	git := &fakeGit{worktrees: map[string][]gitsnap.Worktree{"/src/api": {{Path: "/wt/t_aaaa0002", Branch: "runner/t_aaaa0002"}}},
		forecast: &gitsnap.Forecast{Into: "main", Branches: []gitsnap.BranchForecast{{Branch: "runner/t_aaaa0001", Conflicts: []string{"a.txt"}}}}}
	d, _, _ := fakeGitDeps(t, st, git)
	c, err := CheckMerge(t.Context(), d, CheckRequest{Ref: "t_aaaa0001"})
	if err != nil || c.Task != "t_aaaa0001" || c.Into != "main" || !slices.Equal(c.Conflicts, []string{"a.txt"}) {
		t.Fatalf("CheckMerge = %+v, %v", c, err)
	}
	if want := "forecast /src/api into= runner/t_aaaa0002@/wt/t_aaaa0002<refs/runner/snapshots/t_aaaa0002,runner/t_aaaa0001@<refs/runner/snapshots/t_aaaa0001"; !slices.Contains(git.calls, want) {
		t.Errorf("calls %q lack %q", git.calls, want)
	}
	for _, x := range []struct {
		name  string
		err   error
		usage bool
		text  string
	}{
		{"no such --into", &gitsnap.MissingBranchError{Branch: "rel", Dir: "/src/api", Target: true}, true, "--into rel: no such branch"},
		{"its branch gone", &gitsnap.MissingBranchError{Branch: "runner/t_aaaa0001", Dir: "/src/api"}, true, "branch runner/t_aaaa0001 is gone"},
		{"a bare repository", gitsnap.ErrBareRepo, true, "its project /src/api"},
		{"another failure", errors.New("fatal: bad object"), false, "forecast the merge of t_aaaa0001 in /src/api: fatal: bad object"},
	} {
		git.forecastErr = x.err
		_, err := CheckMerge(t.Context(), d, CheckRequest{Ref: "t_aaaa0001", Into: "rel"})
		if err == nil || errors.Is(err, fault.ErrUsage) != x.usage || !strings.Contains(err.Error(), x.text) {
			t.Errorf("%s: err = %v, want usage %v saying %q", x.name, err, x.usage, x.text)
		}
	}
	git.worktreesErr = map[string]error{"/src/api": gitsnap.ErrNotRepo}
	if _, err := CheckMerge(t.Context(), d, CheckRequest{Ref: "t_aaaa0001"}); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "the worktrees of /src/api") {
		t.Errorf("not a repository: err = %v", err)
	}
}

// TestMergeAllRepositoryGone: a repository that is no longer one has
// nothing to merge; another failure of its forecast stops merge --all
// before anything is merged.
func TestMergeAllRepositoryGone(t *testing.T) {
	st := state.New()
	st.Tasks["t_aaaa0001"] = doneTask("t_aaaa0001")
	git := &fakeGit{worktreesErr: map[string]error{"/src/api": gitsnap.ErrNotRepo}}
	d, _, _ := fakeGitDeps(t, st, git)
	res, err := MergeAll(t.Context(), d, MergeRequest{})
	if err != nil || len(res.Merged)+len(res.Left) != 0 {
		t.Errorf("MergeAll in a repository gone = %+v, %v; want nothing to do", res, err)
	}
	git.worktreesErr = map[string]error{"/src/api": errors.New("git: permission denied")}
	if _, err := MergeAll(t.Context(), d, MergeRequest{}); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a forecast that fails: err = %v", err)
	}
	if slices.ContainsFunc(git.calls, func(c string) bool { return strings.HasPrefix(c, "merge ") }) {
		t.Errorf("something was merged: %q", git.calls)
	}
}
