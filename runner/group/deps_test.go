package group

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
)

// mergeGit is a worktree.Git that records the merges asked of it.
type mergeGit struct {
	worktree.Gitsnap
	merges []string
}

func (g *mergeGit) Commit(context.Context, string, gitsnap.CommitOptions) (*gitsnap.CommitResult, error) {
	return &gitsnap.CommitResult{}, nil
}

func (g *mergeGit) Snapshot(_ context.Context, _, id string) (*gitsnap.Snapshot, error) {
	return &gitsnap.Snapshot{ID: id, Commit: "base"}, nil
}

func (g *mergeGit) Merge(_ context.Context, dir, wt, branch string, opts gitsnap.MergeOptions) (*gitsnap.MergeResult, error) {
	g.merges = append(g.merges, dir+" "+wt+" "+branch+" from "+opts.Base)
	return &gitsnap.MergeResult{Into: "main", Mode: "merge", Commit: "c1"}, nil
}

// coreOf is a worktree.Core over the fake's state, its GitContext's
// refusal recorded by its test.
type coreOf struct{ f *fakeRunner }

func (c coreOf) Reconcile(ctx context.Context) (*state.State, error) { return c.f.store.Read(ctx) }

func (c coreOf) GetTask(ctx context.Context, ref string) (*state.Task, error) {
	return c.f.Task(ctx, ref)
}

type nopJournal struct{}

func (nopJournal) Journal(context.Context, *state.Task, string, string) {}

// TestWorktreesMerges: Worktrees' Merge merges the task its request
// names, with git where the task is; MergeHere merges the record given
// (a candidate brought back: its worktree here), whatever the request
// names, with git here.
func TestWorktreesMerges(t *testing.T) {
	ended := &state.Task{ID: "t_there001", Status: state.StatusDone, Branch: "runner/t_there001", Origin: "/there/repo", Dir: "/there/wt",
		Tmux: state.TmuxTarget{Host: "h"}}
	f := newFake(t, ended)
	git := &mergeGit{}
	var places []string
	d := worktree.Deps{Store: f.store, Record: nopJournal{}, Now: func() time.Time { return time.Time{} }, Warn: func(string, ...any) {}, Core: coreOf{f}, Git: git,
		GitContext: func(ctx context.Context, t *state.Task) (context.Context, error) {
			places = append(places, t.Tmux.Host)
			return ctx, nil
		}}
	m := Worktrees(d)
	if err := m.Merge(t.Context(), worktree.MergeRequest{Ref: "t_there001"}); err != nil {
		t.Fatal(err)
	}
	here := *ended
	here.Origin, here.Dir, here.Tmux.Host = "/here/repo", "/here/wt", ""
	if err := m.MergeHere(t.Context(), worktree.MergeRequest{Ref: "t_there001"}, &here); err != nil {
		t.Fatal(err)
	}
	want := "/there/repo /there/wt runner/t_there001 from base; /here/repo /here/wt runner/t_there001 from base"
	if got := strings.Join(git.merges, "; "); got != want {
		t.Errorf("merges %q, want %q", got, want)
	}
	if strings.Join(places, ",") != "h" {
		t.Errorf("git placed for %q: MergeHere's git is here, Merge's the task's", places)
	}
	if err := m.Merge(t.Context(), worktree.MergeRequest{Ref: "t_nothing"}); err == nil {
		t.Error("a merge of no task went through")
	}
}

// TestDepsWithoutHosts: with no Hosts every candidate's git is here, and
// a check on a host says it was not reached.
func TestDepsWithoutHosts(t *testing.T) {
	d := Deps{Now: func() time.Time { return time.Time{} }}
	ctx := t.Context()
	if got, err := on(ctx, d, "h"); err != nil || got != ctx {
		t.Errorf("git on h with no hosts: %v, %v", got, err)
	}
	if _, err := d.via(ctx, "h"); err == nil {
		t.Error("a transport to h with no hosts")
	}
	r := runCheck(ctx, d, &state.Task{ID: "t_1", Dir: "/x", Tmux: state.TmuxTarget{Host: "h"}}, &state.Group{Check: "true"}, nil)
	if r.Exit != -1 || !strings.HasPrefix(r.Tail, "host h: not reached") {
		t.Errorf("a check on h with no hosts: %+v", r)
	}
}
