package worktree

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

func TestMerge(t *testing.T) {
	f := newFixture(t)
	f.task("t_aaaa0001", state.StatusDone, map[string]string{"b.txt": "from the agent\n"})
	x, res, err := Merge(t.Context(), f.d, MergeRequest{Ref: "t_aaaa0001"})
	if err != nil {
		t.Fatal(err)
	}
	if x.ID != "t_aaaa0001" || res.Into != "main" || f.file("b.txt") != "from the agent\n" {
		t.Errorf("Merge = %+v, b.txt %q; want the agent's file merged into main", res, f.file("b.txt"))
	}
	if msg := git(t, f.repo, "log", "-1", "--format=%B"); !strings.Contains(msg, "Runner-Task: t_aaaa0001") || !strings.Contains(msg, "change t_aaaa0001") {
		t.Errorf("merge commit message %q lacks the task's trailer or headline", msg)
	}
	if len(f.log.events) != 1 || !strings.HasPrefix(f.log.events[0], "merge t_aaaa0001: runner/t_aaaa0001 into main") {
		t.Errorf("journal = %q", f.log.events)
	}
	if f.store.updates != 1 {
		t.Errorf("%d state updates, want 1 (the overlaps cleared)", f.store.updates)
	}
}

func TestMergeSquashWithMessage(t *testing.T) {
	f := newFixture(t)
	f.task("t_aaaa0001", state.StatusOrphaned, map[string]string{"b.txt": "x\n"})
	_, res, err := Merge(t.Context(), f.d, MergeRequest{Ref: "t_aaaa0001", Squash: true, Message: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != "squash" || git(t, f.repo, "log", "-1", "--format=%s") != "mine" {
		t.Errorf("Merge --squash = %+v, last commit %q", res, git(t, f.repo, "log", "-1", "--format=%s"))
	}
}

func TestMergeRefuses(t *testing.T) {
	f := newFixture(t)
	f.task("t_aaaa0001", state.StatusRunning, nil)
	f.store.st.Tasks["t_nobranch"] = &state.Task{ID: "t_nobranch", Status: state.StatusDone, Dir: f.repo}
	for _, c := range []struct {
		req  MergeRequest
		kind error
		want string
	}{
		{MergeRequest{Ref: "t_aaaa0001", Squash: true, Rebase: true}, fault.ErrUsage, "exclude each other"},
		{MergeRequest{Ref: "t_nobranch"}, fault.ErrUsage, "no worktree of its own"},
		{MergeRequest{Ref: "t_aaaa0001"}, fault.ErrBusy, "is running"},
		{MergeRequest{Ref: "t_nothing"}, nil, "no task t_nothing"},
	} {
		_, _, err := Merge(t.Context(), f.d, c.req)
		if err == nil || !strings.Contains(err.Error(), c.want) || c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("Merge(%+v): err = %v, want %v saying %q", c.req, err, c.kind, c.want)
		}
	}
	if f.store.updates != 0 || len(f.log.events) != 0 {
		t.Errorf("a refused merge changed the state (%d) or the journal (%q)", f.store.updates, f.log.events)
	}
}

func TestMergeTextOrHostFails(t *testing.T) {
	f := newFixture(t)
	x := f.task("t_aaaa0001", state.StatusDone, map[string]string{"b.txt": "x\n"})
	f.store.textErr = errors.New("task text: unexpected EOF")
	if _, _, err := Merge(t.Context(), f.d, MergeRequest{Ref: x.ID}); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("a corrupt task text: err = %v", err)
	}
	f.store.textErr = nil
	x.Tmux.Host = "gone"
	if _, _, err := Merge(t.Context(), f.d, MergeRequest{Ref: x.ID}); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("an unreachable host: err = %v", err)
	}
	if f.file("b.txt") != "" {
		t.Error("a merge that failed merged")
	}
}

func TestMergeConflictChangesNothing(t *testing.T) {
	f := newFixture(t)
	f.task("t_aaaa0001", state.StatusDone, map[string]string{"a.txt": "one\n"})
	f.task("t_aaaa0002", state.StatusDone, map[string]string{"a.txt": "two\n"})
	if _, _, err := Merge(t.Context(), f.d, MergeRequest{Ref: "t_aaaa0001"}); err != nil {
		t.Fatal(err)
	}
	head := git(t, f.repo, "rev-parse", "HEAD")
	_, _, err := Merge(t.Context(), f.d, MergeRequest{Ref: "t_aaaa0002"})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	if git(t, f.repo, "rev-parse", "HEAD") != head || f.file("a.txt") != "one\n" || git(t, f.repo, "status", "--porcelain") != "" {
		t.Error("a conflicting merge left the repository changed")
	}
}

func TestMergeLocalChangesAreBadInput(t *testing.T) {
	f := newFixture(t)
	f.task("t_aaaa0001", state.StatusDone, map[string]string{"a.txt": "agent\n"})
	write(t, f.repo, "a.txt", "the user's\n")
	_, _, err := Merge(t.Context(), f.d, MergeRequest{Ref: "t_aaaa0001"})
	if !errors.Is(err, fault.ErrUsage) {
		t.Errorf("err = %v, want a usage error (local changes)", err)
	}
	if f.file("a.txt") != "the user's\n" {
		t.Error("the user's change was lost")
	}
}

func TestList(t *testing.T) {
	f := newFixture(t)
	f.task("t_aaaa0001", state.StatusDone, map[string]string{"b.txt": "x\n"})
	gone := f.task("t_aaaa0002", state.StatusFailed, nil)
	f.task("t_aaaa0003", state.StatusRunning, nil)
	if err := os.RemoveAll(gone.Dir); err != nil {
		t.Fatal(err)
	}
	list, err := List(t.Context(), f.d)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Info{}
	for _, w := range list {
		by[w.Task] = w
	}
	if len(list) != 3 {
		t.Fatalf("List = %+v, want 3 worktrees", list)
	}
	if w := by["t_aaaa0001"]; w.Merged || w.Status != state.StatusDone || w.Forecast == nil || !w.Forecast.Clean {
		t.Errorf("a worktree with uncommitted work: %+v (forecast %v), want unmerged, clean to merge", w, w.Forecast)
	}
	if w := by["t_aaaa0002"]; !w.Gone {
		t.Errorf("a worktree deleted by hand: %+v, want Gone", w)
	}
	if w := by["t_aaaa0003"]; !w.Merged {
		t.Errorf("a worktree with nothing in it: %+v, want merged (nothing to lose)", w)
	}
}

func TestListSkipsWhatCannotBeRead(t *testing.T) {
	f := newFixture(t)
	f.store.st.Projects["far"] = &state.Project{Name: "far", Dir: "/srv/far", Host: "gone"}
	f.store.st.Projects["old"] = &state.Project{Name: "old", Dir: t.TempDir()} // no repository
	list, err := List(t.Context(), f.d)
	if err != nil || len(list) != 0 {
		t.Errorf("List = %+v, %v; want none, no error", list, err)
	}
}

func TestCheckMerge(t *testing.T) {
	f := newFixture(t)
	f.task("t_aaaa0001", state.StatusDone, map[string]string{"a.txt": "one\n"})
	f.task("t_aaaa0002", state.StatusDone, map[string]string{"a.txt": "two\n"})
	f.task("t_aaaa0003", state.StatusDone, map[string]string{"c.txt": "c\n"})
	c, err := CheckMerge(t.Context(), f.d, CheckRequest{Ref: "t_aaaa0001"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Clean || len(c.With) != 1 || c.With[0].Task != "t_aaaa0002" || c.Into != "main" {
		t.Errorf("CheckMerge(t_aaaa0001) = %+v, want a conflict with t_aaaa0002", c)
	}
	if c, err := CheckMerge(t.Context(), f.d, CheckRequest{Ref: "t_aaaa0003"}); err != nil || !c.Clean {
		t.Errorf("CheckMerge(t_aaaa0003) = %+v, %v; want clean", c, err)
	}
	if _, err := CheckMerge(t.Context(), f.d, CheckRequest{Ref: "t_aaaa0003", Into: "nosuch"}); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "no such branch") {
		t.Errorf("--into nosuch: err = %v", err)
	}
	all, err := CheckMerges(t.Context(), f.d, []string{"t_aaaa0001", "t_aaaa0002", "t_aaaa0003"})
	if err != nil || len(all) != 3 || all["t_aaaa0003"].Clean != true || all["t_aaaa0002"].Clean {
		t.Errorf("CheckMerges = %v, %v", all, err)
	}
	if head := git(t, f.repo, "status", "--porcelain"); head != "" {
		t.Errorf("a forecast changed the repository: %q", head)
	}
}

func TestCheckMergeRefuses(t *testing.T) {
	f := newFixture(t)
	x := f.task("t_aaaa0001", state.StatusDone, nil)
	f.store.st.Tasks["t_nobranch"] = &state.Task{ID: "t_nobranch", Status: state.StatusDone, Dir: f.repo}
	if _, err := CheckMerge(t.Context(), f.d, CheckRequest{Ref: "t_nobranch"}); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("no branch: err = %v", err)
	}
	if got, err := CheckMerges(t.Context(), f.d, []string{"t_nobranch"}); err != nil || len(got) != 0 {
		t.Errorf("CheckMerges of a task without a branch = %v, %v; want none", got, err)
	}
	if _, err := CheckMerges(t.Context(), f.d, []string{"t_nothing"}); err == nil {
		t.Error("CheckMerges of an unknown task: no error")
	}
	git(t, f.repo, "worktree", "remove", "--force", x.Dir)
	git(t, f.repo, "branch", "-D", x.Branch)
	if _, err := CheckMerge(t.Context(), f.d, CheckRequest{Ref: x.ID}); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("a branch deleted: err = %v", err)
	}
}

func TestMergeAll(t *testing.T) {
	f := newFixture(t)
	f.task("t_aaaa0001", state.StatusDone, map[string]string{"a.txt": "one\n"})
	f.task("t_aaaa0002", state.StatusDone, map[string]string{"a.txt": "two\n"})
	f.task("t_aaaa0003", state.StatusDone, map[string]string{"c.txt": "c\n"})
	f.task("t_aaaa0004", state.StatusNeedsInput, map[string]string{"d.txt": "d\n"})
	// The agent of t_aaaa0004 left its work uncommitted: it counts.
	res, err := MergeAll(t.Context(), f.d, MergeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var merged []string
	for _, m := range res.Merged {
		merged = append(merged, m.Task)
	}
	if strings.Join(merged, " ") != "t_aaaa0003 t_aaaa0001" {
		t.Errorf("merged %q, want the one in no conflict, then one of the pair: t_aaaa0003 t_aaaa0001", merged)
	}
	if res.Stopped != "t_aaaa0002" || !errors.Is(res.StopErr, ErrConflict) {
		t.Errorf("stopped at %q (%v), want t_aaaa0002 on a conflict", res.Stopped, res.StopErr)
	}
	left := map[string]LeftTask{}
	for _, l := range res.Left {
		left[l.Task] = l
	}
	if l := left["t_aaaa0004"]; !strings.Contains(l.Reason, "needs_input, not done") {
		t.Errorf("the task not done: %+v", l)
	}
	if l := left["t_aaaa0002"]; len(l.Files) != 1 || l.Files[0] != "a.txt" {
		t.Errorf("the conflicting task: %+v, want a.txt named", l)
	}
}

func TestMergeAllNothingToDo(t *testing.T) {
	f := newFixture(t)
	res, err := MergeAll(t.Context(), f.d, MergeRequest{})
	if err != nil || len(res.Merged) != 0 || len(res.Left) != 0 || res.Stopped != "" {
		t.Errorf("MergeAll with no task = %+v, %v", res, err)
	}
	x := f.task("t_aaaa0001", state.StatusDone, nil)
	x.Tmux.Host = "gone"
	if _, err := MergeAll(t.Context(), f.d, MergeRequest{}); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("a repository on an unreachable host: err = %v", err)
	}
}
