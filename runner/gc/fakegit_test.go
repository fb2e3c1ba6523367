package gc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
)

// fakeGit is gc's git over maps: runner's worktree home of each
// repository, the refs of each, what fails, and the calls made (with the
// host of their ctx).
type fakeGit struct {
	homes map[string]string
	refs  map[string][]string // by repository
	// fail makes the call whose words start with a key fail.
	fail map[string]error
	// same answers SameRepository (sameErr its error).
	same    bool
	sameErr error
	calls   []string
}

var _ Git = (*fakeGit)(nil)

// hostKey carries the host a ctx is for, as worldGit's GitOn makes it.
type hostKey struct{}

func (g *fakeGit) call(ctx context.Context, words ...string) error {
	host, _ := ctx.Value(hostKey{}).(string)
	c := strings.Join(words, " ")
	g.calls = append(g.calls, c+" @"+host)
	for prefix, err := range g.fail {
		if strings.HasPrefix(c, prefix) {
			return err
		}
	}
	return nil
}

func (g *fakeGit) WorktreeHome(ctx context.Context, dir string) (string, error) {
	if err := g.call(ctx, "home", dir); err != nil {
		return "", err
	}
	return g.homes[dir], nil
}

func (g *fakeGit) WorktreeRemove(ctx context.Context, dir, path string) error {
	return g.call(ctx, "remove", dir, path)
}

func (g *fakeGit) DeleteBranch(ctx context.Context, dir, branch string) error {
	return g.call(ctx, "delete", dir, branch)
}

func (g *fakeGit) SameRepository(ctx context.Context, dir string, there context.Context, thereDir string) (bool, error) {
	if err := g.call(there, "same", dir, thereDir); err != nil {
		return false, err
	}
	return g.same, g.sameErr
}

func (g *fakeGit) DropRefs(ctx context.Context, dir string, refs []string) ([]string, error) {
	if err := g.call(ctx, append([]string{"drop", dir}, refs...)...); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range refs {
		if slices.Contains(g.refs[dir], r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (g *fakeGit) RefCommit(ctx context.Context, dir, ref string) (string, error) {
	_ = g.call(ctx, "ref", dir, ref)
	if slices.Contains(g.refs[dir], ref) {
		return "c1", nil
	}
	return "", errors.New("no such ref")
}

// gitWorld is a world whose git is g: each host's ctx names it, host
// "down" cannot be reached.
func gitWorld(t *testing.T, g *fakeGit) *world {
	w := newWorld(t)
	w.d.Git = g
	w.gitOn = func(ctx context.Context, host string) (context.Context, error) {
		if host == "down" {
			return nil, errors.New("host down (u@down): host unreachable")
		}
		return context.WithValue(ctx, hostKey{}, host), nil
	}
	return w
}

// TestWorktreesThroughGit: gc removes a finished task's merged worktree
// and then its branch, on the task's machine; one no record names only
// when runner made it (a task id for its branch, in runner's worktree
// home); what fails keeps the worktree and says why (a branch left after
// its worktree went says that too); a dry run asks git nothing.
func TestWorktreesThroughGit(t *testing.T) {
	g := &fakeGit{homes: map[string]string{"/r": "/r/.git/runner-worktrees"},
		fail: map[string]error{"remove /r /r/.git/runner-worktrees/t_fails001": errors.New("worktree locked"),
			"delete /r runner/t_brfail01": errors.New("branch checked out")}}
	w := gitWorld(t, g)
	old := clock.Now().Add(-2 * time.Hour)
	in := func(id string) string { return "/r/.git/runner-worktrees/" + id }
	list := []worktree.Info{
		{Task: "t_merged01", Branch: "runner/t_merged01", Path: in("t_merged01"), Origin: "/r", Status: state.StatusDone, Ended: old, Merged: true},
		{Task: "t_there001", Branch: "runner/t_there001", Path: in("t_there001"), Origin: "/r", Host: "h", Status: state.StatusDone, Ended: old, Merged: true},
		{Task: "t_busy0001", Branch: "runner/t_busy0001", Path: in("t_busy0001"), Origin: "/r", Status: state.StatusRunning, Merged: true},
		{Task: "t_unmerged", Branch: "runner/t_unmerged", Path: in("t_unmerged"), Origin: "/r", Status: state.StatusDone, Ended: old},
		{Branch: "runner/t_orphan01", Path: in("t_orphan01"), Origin: "/r", Merged: true},
		{Branch: "runner/t_mine0001", Path: "/home/u/mine", Origin: "/r", Merged: true},
		{Branch: "runner/mine", Path: in("mine"), Origin: "/r", Merged: true},
		{Task: "t_fails001", Branch: "runner/t_fails001", Path: in("t_fails001"), Origin: "/r", Status: state.StatusDone, Ended: old, Merged: true},
		{Task: "t_brfail01", Branch: "runner/t_brfail01", Path: in("t_brfail01"), Origin: "/r", Status: state.StatusDone, Ended: old, Merged: true},
		{Task: "t_down0001", Branch: "runner/t_down0001", Path: in("t_down0001"), Origin: "/r", Host: "down", Status: state.StatusDone, Ended: old, Merged: true},
	}
	w.d.ListWorktrees = func(context.Context) ([]worktree.Info, error) { return slices.Clone(list), nil }

	got, err := gcWorktrees(t.Context(), w.d, Options{OlderThan: time.Hour, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range got {
		if x.Removed {
			t.Errorf("dry run removed %s", x.Path)
		}
	}
	if slices.ContainsFunc(g.calls, func(c string) bool { return !strings.HasPrefix(c, "home ") }) {
		t.Errorf("a dry run changed git: %q", g.calls)
	}

	g.calls = nil
	if got, err = gcWorktrees(t.Context(), w.d, Options{OlderThan: time.Hour}); err != nil {
		t.Fatal(err)
	}
	kept := map[string]string{}
	var removed []string
	for _, x := range got {
		if x.Removed {
			removed = append(removed, x.Branch)
		} else {
			kept[x.Branch] = x.Kept
		}
	}
	if want := "runner/t_merged01 runner/t_there001 runner/t_orphan01"; strings.Join(removed, " ") != want {
		t.Errorf("removed %v, want %s", removed, want)
	}
	for branch, why := range map[string]string{
		"runner/t_busy0001": "the task is running", "runner/t_unmerged": "unmerged: runner merge t_unmerged",
		"runner/t_mine0001": "not a worktree of runner's", "runner/mine": "not a worktree of runner's",
		"runner/t_fails001": "worktree locked", "runner/t_brfail01": "worktree removed; branch checked out",
		"runner/t_down0001": "host down",
	} {
		if !strings.HasPrefix(kept[branch], why) {
			t.Errorf("%s kept for %q, want %q", branch, kept[branch], why)
		}
	}
	for _, c := range []string{"remove /r " + in("t_merged01") + " @", "delete /r runner/t_merged01 @", "remove /r " + in("t_there001") + " @h",
		"delete /r runner/t_there001 @h"} {
		if !slices.Contains(g.calls, c) {
			t.Errorf("no %q in %q", c, g.calls)
		}
	}
	if slices.Contains(g.calls, "delete /r runner/t_fails001 @") {
		t.Error("a branch deleted whose worktree could not be removed")
	}
}

// TestDropRefsThroughGit: a group's refs here are dropped with no look
// at another repository; on a host, none when its repository is the one
// here or is gone, an error when the look fails; a dry run lists the
// refs there and drops none.
func TestDropRefsThroughGit(t *testing.T) {
	g := &fakeGit{refs: map[string][]string{"/r": {"refs/runner/snapshots/g_1"}}}
	w := gitWorld(t, g)
	ctx := t.Context()
	refs := []string{"refs/runner/snapshots/g_1", "refs/runner/snapshots/g_2"}
	got, err := dropRefs(ctx, w.d, "", "/r", refs, false)
	if err != nil || strings.Join(got, " ") != "refs/runner/snapshots/g_1" || strings.Join(g.calls, "; ") != "drop /r "+strings.Join(refs, " ")+" @" {
		t.Errorf("here: %v, %v; calls %q", got, err, g.calls)
	}
	for _, tc := range []struct {
		name    string
		same    bool
		sameErr error
		dry     bool
		want    string
		wantErr bool
		calls   string
	}{
		{name: "another repository", want: "refs/runner/snapshots/g_1", calls: "same /r /r @h; drop /r " + strings.Join(refs, " ") + " @h"},
		{name: "the same repository", same: true, calls: "same /r /r @h"},
		{name: "no repository there", sameErr: gitsnap.ErrNotRepo, calls: "same /r /r @h"},
		{name: "the look failed", sameErr: errors.New("ssh: broken pipe"), wantErr: true, calls: "same /r /r @h"},
		{name: "dry run", dry: true, want: "refs/runner/snapshots/g_1",
			calls: "same /r /r @h; ref /r refs/runner/snapshots/g_1 @h; ref /r refs/runner/snapshots/g_2 @h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g.calls, g.same, g.sameErr = nil, tc.same, tc.sameErr
			got, err := dropRefs(ctx, w.d, "h", "/r", refs, tc.dry)
			if (err != nil) != tc.wantErr || strings.Join(got, " ") != tc.want || strings.Join(g.calls, "; ") != tc.calls {
				t.Errorf("got %v, %v; calls %q; want %q, error %v, calls %q", got, err, g.calls, tc.want, tc.wantErr, tc.calls)
			}
		})
	}
	if _, err := dropRefs(ctx, w.d, "down", "/r", refs, false); err == nil || !strings.Contains(err.Error(), "host down") {
		t.Errorf("a host down: %v", err)
	}
}
