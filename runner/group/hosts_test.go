package group

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/testenv"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
)

// hostGroup is a group of two candidates: t_here001 in a worktree of
// the repository here, t_host001 on host "h", in a worktree of another
// repository (a clone: the host's), each from the group's snapshot
// taken here (carried there). The host's candidate leaves good.txt
// uncommitted, the local one bad.txt.
func hostGroup(t *testing.T) (f *fakeRunner, here, there string) {
	t.Helper()
	ctx := t.Context()
	now := clock.Now()
	here = repoHere(t)
	there = filepath.Join(t.TempDir(), "there")
	git(t, filepath.Dir(there), "clone", "-q", here, there)
	g, err := gitsnap.Take(ctx, here, gitsnap.Options{ID: "g_hosts001"})
	if err != nil {
		t.Fatal(err)
	}
	hctx, _ := hostCtx(ctx, "h")
	if _, err := gitsnap.Carry(ctx, here, hctx, there, []gitsnap.CarryRef{{Ref: g.Ref, Commit: g.Commit}}, []string{g.Base}); err != nil {
		t.Fatal(err)
	}
	cand := func(gctx context.Context, repo, id, host, file string) *state.Task {
		s, err := gitsnap.Alias(gctx, repo, g.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		home, err := gitsnap.WorktreeHome(gctx, repo)
		if err != nil {
			t.Fatal(err)
		}
		wt := filepath.Join(home, id)
		if err := gitsnap.WorktreeAdd(gctx, repo, wt, "runner/"+id, s.Commit); err != nil {
			t.Fatal(err)
		}
		writeFile(t, wt, file, strings.TrimSuffix(file, ".txt")+"\n")
		return &state.Task{ID: id, Project: "api", Created: now.Add(-3 * time.Minute), Agent: "sim", Text: "make it good", Status: state.StatusDone, Dir: wt, Origin: repo,
			Branch: "runner/" + id, SnapshotRef: s.Ref, Tmux: state.TmuxTarget{Host: host}, Started: now.Add(-2 * time.Minute), Ended: now.Add(-time.Minute)}
	}
	local := cand(ctx, here, "t_here001", "", "bad.txt")
	remote := cand(hctx, there, "t_host001", "h", "good.txt")
	f = newFake(t, local, remote)
	f.addGroup(&state.Group{ID: g.ID, Dir: here, Text: "make it good", Tasks: []string{local.ID, remote.ID}, Ended: now})
	return f, here, there
}

// TestPickFromHost: pick of the host's candidate commits what it left
// there, brings its branch and snapshot back here as one pack, merges it
// into the repository here (through MergeHere, its record as here) and
// removes the worktree and branch it made here; the user's uncommitted
// work is untouched. The other candidate is closed.
func TestPickFromHost(t *testing.T) {
	f, here, there := hostGroup(t)
	res, err := Pick(t.Context(), f.deps(), PickRequest{Group: "g_hosts001", Task: "t_host001"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Host != "h" || res.Bytes == 0 || res.By != "hand" || len(res.Errors) != 0 {
		t.Errorf("picked %+v", res)
	}
	if got := f.saw("mergehere"); len(got) != 1 || !strings.Contains(got[0], "t_host001 "+here+" ") || !strings.HasSuffix(got[0], " ") {
		t.Errorf("merges %v", got)
	}
	if got := f.saw("close"); len(got) != 1 || got[0] != "close t_here001" {
		t.Errorf("closed %v", got)
	}
	if got := git(t, here, "show", "HEAD:good.txt"); got != "good" {
		t.Errorf("good.txt here: %q", got)
	}
	if got := git(t, here, "status", "--porcelain"); got != "?? mine.txt" {
		t.Errorf("the user's tree: %q", got)
	}
	if got := git(t, here, "branch", "--list", "runner/t_host001"); got != "" {
		t.Errorf("the branch made here is left: %q", got)
	}
	if _, err := os.Stat(filepath.Join(here, ".git", "runner-worktrees", "t_host001")); !os.IsNotExist(err) {
		t.Errorf("the worktree made here is left: %v", err)
	}
	if got := git(t, here, "rev-parse", PickedRefPrefix+"t_host001"); got != git(t, there, "rev-parse", "runner/t_host001") {
		t.Errorf("%s here is %s", PickedRefPrefix, got)
	}
	if got := git(t, there, "log", "-1", "--format=%B", "runner/t_host001"); !strings.Contains(got, "Runner-Task: t_host001") {
		t.Errorf("the leftovers' commit there: %q", got)
	}
	g, err := f.store.FindGroup(t.Context(), "g_hosts001")
	if err != nil || g.Picked != "t_host001" {
		t.Errorf("group after: %+v, %v", g, err)
	}
}

// TestPickFromHostRefusals: a branch here at another commit than the
// host's is not overwritten; a host that does not answer fails the pick
// with nothing merged.
func TestPickFromHostRefusals(t *testing.T) {
	f, here, _ := hostGroup(t)
	git(t, here, "branch", "runner/t_host001", "HEAD")
	git(t, here, "worktree", "add", "-q", filepath.Join(t.TempDir(), "wt"), "runner/t_host001")
	_, err := Pick(t.Context(), f.deps(), PickRequest{Group: "g_hosts001", Task: "t_host001"})
	if !errors.Is(err, gitsnap.ErrExists) || len(f.saw("mergehere")) != 0 {
		t.Errorf("a branch here elsewhere: %v (merges %v)", err, f.saw("mergehere"))
	}
	f2, _, _ := hostGroup(t)
	if err := f2.store.UpdateTask(t.Context(), "t_host001", func(x *state.Task) error { x.Tmux.Host = "gone"; return nil }); err != nil {
		t.Fatal(err)
	}
	_, err = Pick(t.Context(), f2.deps(), PickRequest{Group: "g_hosts001", Task: "t_host001"})
	if err == nil || !strings.Contains(err.Error(), "unreachable") || len(f2.saw("mergehere")) != 0 {
		t.Errorf("a host gone: %v", err)
	}
	if g, _ := f2.store.FindGroup(t.Context(), "g_hosts001"); g.Picked != "" {
		t.Errorf("picked %s with its host gone", g.Picked)
	}
}

// TestCompareAcrossHosts: each row names its candidate's host and reads
// its changes where it runs; --diff of two candidates on two machines is
// bad input (NotMemberError), and of one with a host gone, an error.
func TestCompareAcrossHosts(t *testing.T) {
	f, _, _ := hostGroup(t)
	c, err := Compare(t.Context(), f.deps(), "g_hosts001")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct{ host, path string }{{"", "bad.txt"}, {"h", "good.txt"}} {
		r := c.Rows[i]
		if r.Host != want.host || r.Files != 1 || r.Paths[0] != want.path || r.Error != "" || r.WallMS != 60000 {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	_, err = Between(t.Context(), f.deps(), "g_hosts001", "t_here", "t_host")
	var nm *NotMemberError
	if !errors.As(err, &nm) || !strings.Contains(err.Error(), "t_host001 on host h") {
		t.Errorf("--diff across machines: %v", err)
	}
	if err := f.store.UpdateTask(t.Context(), "t_host001", func(x *state.Task) error { x.Tmux.Host = "gone"; return nil }); err != nil {
		t.Fatal(err)
	}
	c, err = Compare(t.Context(), f.deps(), "g_hosts001")
	if err != nil || !strings.Contains(c.Rows[1].Error, "unreachable") {
		t.Errorf("a host gone: %+v, %v", c.Rows[1], err)
	}
}

// TestCompareForecastPerMachine: the merge forecast is one look per
// machine the candidates' branches are on (a look reads one repository);
// a host's look is into the branch here, carried there under a branch of
// its own and removed after, and names the branch here; a machine whose
// look failed says so on its candidates only.
func TestCompareForecastPerMachine(t *testing.T) {
	f, here, there := hostGroup(t)
	d := f.deps()
	var looks []string
	hostFails := true
	f.forecast = func(_ context.Context, ids []string, into string) (map[string]*worktree.Check, error) {
		looks = append(looks, strings.Join(ids, ",")+" into "+into)
		if into != "" && git(t, there, "rev-parse", "refs/heads/"+into) != git(t, here, "rev-parse", "HEAD") {
			t.Errorf("the look there is not into the commit here")
		}
		if ids[0] == "t_host001" && hostFails {
			return nil, errors.New("host h: no answer")
		}
		out := map[string]*worktree.Check{}
		for _, id := range ids {
			out[id] = &worktree.Check{Task: id, Outlook: worktree.Outlook{Into: "main", Clean: true}}
		}
		return out, nil
	}
	c, err := Compare(t.Context(), d, "g_hosts001")
	if err != nil {
		t.Fatal(err)
	}
	if len(looks) != 2 || looks[0] != "t_here001 into " || !strings.HasPrefix(looks[1], "t_host001 into runner-forecast/g_hosts001-") {
		t.Errorf("looks %q, want one per machine, the host's into the branch here carried there", looks)
	}
	if c.Rows[0].Forecast == nil || !c.Rows[0].Forecast.Clean || c.Rows[0].ForecastError != "" {
		t.Errorf("the candidate here: %+v, %q", c.Rows[0].Forecast, c.Rows[0].ForecastError)
	}
	if c.Rows[1].Forecast != nil || c.Rows[1].ForecastError != "host h: no answer" {
		t.Errorf("the candidate on h: %+v, %q", c.Rows[1].Forecast, c.Rows[1].ForecastError)
	}
	hostFails = false
	if c, err = Compare(t.Context(), d, "g_hosts001"); err != nil {
		t.Fatal(err)
	}
	if o := c.Rows[1].Forecast; o == nil || o.Into != "main" {
		t.Errorf("the candidate on h: %+v, %q: want a forecast into main (here)", o, c.Rows[1].ForecastError)
	}
	for _, dir := range []string{here, there} {
		if out := git(t, dir, "for-each-ref", "refs/heads/runner-forecast/"); out != "" {
			t.Errorf("the branch carried for the look is left in %s: %s", dir, out)
		}
	}
}

// TestRunCheckThere: the check runs in the folder there (its name and
// the command reach the shell as values), its exit code and output kept;
// a folder that is not there is exit 126; past its timeout it is ended.
func TestRunCheckThere(t *testing.T) {
	dir := filepath.Join(t.TempDir(), `it's $(touch PWNED) "x"`)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "here.txt", "x")
	ctx := t.Context()
	if r := RunCheckThere(ctx, transport.Local{}, dir, "test -e here.txt && echo found; exit 4", time.Minute, nil); r.Exit != 4 || r.Tail != "found" {
		t.Errorf("check there: %+v", r)
	}
	if r := RunCheckThere(ctx, transport.Local{}, dir+"-nosuch", "true", time.Minute, nil); r.Exit != 126 {
		t.Errorf("no folder there: %+v", r)
	}
	if r := RunCheckThere(ctx, transport.Local{}, dir, "sleep 30", 200*time.Millisecond, nil); !r.TimedOut || r.Passed() {
		t.Errorf("past its timeout: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "PWNED")); err == nil {
		t.Error("the folder's name ran in a shell")
	}
}

// TestRunCheckThereEndsItThere: a check past its timeout is ended there,
// what it started too, not only the session that runs it (as ending an
// ssh session would leave it: here, the process transport.Local started).
func TestRunCheckThereEndsItThere(t *testing.T) {
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("no timeout(1) here")
	}
	dir := t.TempDir()
	r := RunCheckThere(t.Context(), transport.Local{}, dir, "(sleep 2; touch late.txt) & wait", 200*time.Millisecond, nil)
	if !r.TimedOut {
		t.Fatalf("past its timeout: %+v", r)
	}
	time.Sleep(2500 * time.Millisecond) // past the sleep of a check left running
	if _, err := os.Stat(filepath.Join(dir, "late.txt")); err == nil {
		t.Error("the check went on after its timeout: it wrote late.txt")
	}
}

// TestCheckOnHost: a group's supervisor runs the check of a candidate on
// a host there, and sends a failure back; a sandboxed one there runs
// wrapped by its Sandbox's WrapThere (not at all without it, nor when its sandbox
// cannot be made: said in the result); a host that cannot be reached is
// said in the result.
func TestCheckOnHost(t *testing.T) {
	f, _, _ := hostGroup(t)
	d := f.deps()
	ctx := t.Context()
	g := &state.Group{ID: "g_hosts001", Check: "test ! -e good.txt", CheckRetry: 1}
	t2, err := d.Tasks.Task(ctx, "t_host001")
	if err != nil {
		t.Fatal(err)
	}
	if !checkOne(ctx, d, g, t2) {
		t.Error("a failed check was not sent back")
	}
	t2, _ = d.Tasks.Task(ctx, "t_host001")
	if t2.Check == nil || t2.Check.Exit != 1 || t2.Check.Runs != 1 {
		t.Errorf("check recorded: %+v", t2.Check)
	}
	if sent := f.saw("send t_host001 The check `test ! -e good.txt` failed"); len(sent) != 1 {
		t.Errorf("sent %v", f.saw("send"))
	}
	boxed := *t2
	boxed.Sandbox = []string{"bwrap"}
	if r := runCheck(ctx, d, &boxed, g, nil); r.Exit != -1 || !strings.Contains(r.Tail, "cannot sandbox it there (run it in the candidate's folder yourself") {
		t.Errorf("sandboxed on a host, no way to sandbox it there: %+v", r)
	}
	var wrapped []string
	d.Sandbox = fakeSandbox{there: func(_ context.Context, x *state.Task, argv []string) ([]string, error) {
		wrapped = append(wrapped, x.ID)
		return append([]string{"env", "IN_BOX=1"}, argv...), nil
	}}
	g.Check = `test "$IN_BOX" = 1 && echo boxed`
	if r := runCheck(ctx, d, &boxed, g, nil); r.Exit != 0 || r.Tail != "boxed" || strings.Join(wrapped, ",") != "t_host001" {
		t.Errorf("sandboxed on a host, wrapped there: %+v (wrapped %v)", r, wrapped)
	}
	d.Sandbox = fakeSandbox{there: func(context.Context, *state.Task, []string) ([]string, error) {
		return nil, errors.New("bwrap is not installed there")
	}}
	if r := runCheck(ctx, d, &boxed, g, nil); r.Exit != -1 || !strings.Contains(r.Tail, "the check's sandbox on local: bwrap is not installed there") {
		t.Errorf("sandboxed on a host, no sandbox there: %+v", r)
	}
	gone := *t2
	gone.Tmux.Host = "gone"
	if r := runCheck(ctx, d, &gone, g, nil); r.Exit != -1 || !strings.Contains(r.Tail, "host gone") {
		t.Errorf("host gone: %+v", r)
	}
}

// TestAwait: a group that ended is returned with its candidates; one
// whose supervisor runs is waited for until ctx ends; one whose
// supervisor is gone is seen through here when takeOver allows it (its
// candidates all ended: it ends), not otherwise.
func TestAwait(t *testing.T) {
	f, _, _ := hostGroup(t)
	d := f.deps()
	before, countErr := testenv.InotifyInstances()
	g, tasks, err := Await(t.Context(), d, "g_hosts001", true)
	if err != nil || len(tasks) != 2 || g.Ended.IsZero() {
		t.Fatalf("ended group: %+v, %d tasks, %v", g, len(tasks), err)
	}
	// No watch for a group that ended (its inotify instance would hold
	// the process's exit).
	if after, _ := testenv.InotifyInstances(); countErr == nil && after != before {
		t.Errorf("ended group: %d inotify instances after the wait, %d before", after, before)
	}
	if err := f.store.UpdateGroup(t.Context(), "g_hosts001", func(x *state.Group) error {
		x.Ended, x.SupervisorPID, x.SupervisorStart = time.Time{}, 4242, "x"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f.alive = true
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if g, _, err := Await(ctx, d, "g_hosts001", true); !errors.Is(err, context.DeadlineExceeded) || g == nil {
		t.Errorf("supervisor alive: %+v, %v", g, err)
	}
	f.alive = false
	ctx2, cancel2 := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel2()
	if _, _, err := Await(ctx2, d, "g_hosts001", false); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("no take-over: %v", err)
	}
	g, _, err = Await(t.Context(), d, "g_hosts001", true)
	if err != nil || g.Ended.IsZero() || g.SupervisorPID != 0 || len(f.saw("say group g_hosts001: its supervisor is gone")) != 1 {
		t.Errorf("taken over: %+v, %v, %v", g, err, f.calls)
	}
	if SupervisorAlive(Deps{}, &state.Group{}) {
		t.Error("a group with no supervisor pid has a live supervisor")
	}
}

// TestCancelAtWork: only the candidates still at work are cancelled,
// with the reason given.
func TestCancelAtWork(t *testing.T) {
	f, _, _ := hostGroup(t)
	if err := f.store.UpdateTask(t.Context(), "t_host001", func(x *state.Task) error { x.Status = state.StatusRunning; return nil }); err != nil {
		t.Fatal(err)
	}
	CancelAtWork(t.Context(), f.deps(), "g_hosts001", "interrupted")
	if got := f.saw("cancel"); len(got) != 1 || got[0] != "cancel t_host001 interrupted" {
		t.Errorf("cancelled %v", got)
	}
	CancelAtWork(t.Context(), f.deps(), "g_nosuch", "x")
}

// TestHostLostMidGroup: a candidate orphaned on a host (its host stopped
// answering) has ended for its group, did not succeed and is named by
// Lost with its reason; one orphaned here has not ended (its supervisor
// may be seen through by resume).
func TestHostLostMidGroup(t *testing.T) {
	lost := &state.Task{ID: "t_b", Status: state.StatusOrphaned, Tmux: state.TmuxTarget{Host: "b"},
		History: []state.StatusChange{{Status: state.StatusOrphaned, Reason: "host b unreachable since 10:00:00 UTC (loop): ssh: connection refused"}}}
	here := &state.Task{ID: "t_h", Status: state.StatusOrphaned}
	done := &state.Task{ID: "t_a", Status: state.StatusDone, Tmux: state.TmuxTarget{Host: "a"}}
	if !Ended(lost) || Ended(here) || !Ended(done) {
		t.Errorf("Ended: lost %v, here %v, done %v", Ended(lost), Ended(here), Ended(done))
	}
	g := &state.Group{ID: "g_x", Tasks: []string{"t_a", "t_b", "t_h"}}
	tasks := map[string]*state.Task{"t_a": done, "t_b": lost, "t_h": here}
	if ok, total := Outcome(g, tasks); ok != 1 || total != 3 {
		t.Errorf("Outcome %d of %d", ok, total)
	}
	if got := Lost(g, tasks); len(got) != 1 || !strings.HasPrefix(got[0], "t_b on host b: host b unreachable since 10:00:00 UTC") {
		t.Errorf("Lost %q", got)
	}
}

// TestVoteAcrossHosts: a candidate on a host votes as one here does (ask
// runs its shadow there): it is asked with the others, its ballot counts,
// and the prompt it gets shows the candidates here.
func TestVoteAcrossHosts(t *testing.T) {
	f, _, _ := hostGroup(t)
	d := f.deps()
	var asked []string
	prompts := map[string]string{}
	d.Ask = func(_ context.Context, req ask.Request) ([]ask.Answer, error) {
		asked = req.Targets
		for _, id := range req.Targets {
			prompts[id] = req.PromptFor(&state.Task{ID: id})
		}
		return []ask.Answer{
			{Task: "t_here001", Agent: "sim", Answer: "VOTE: t_host001\nREASON: it wrote good.txt"},
			{Task: "t_host001", Agent: "sim", Answer: "VOTE: t_here002\nREASON: fewer files"},
			{Task: "t_here002", Agent: "sim", Answer: "VOTE: t_host001\nREASON: it passed"},
		}, nil
	}
	g, _ := f.store.FindGroup(t.Context(), "g_hosts001")
	g.Tasks = append(g.Tasks, "t_here002")
	tasks := map[string]*state.Task{}
	for _, id := range []string{"t_here001", "t_host001"} {
		tasks[id], _ = d.Tasks.Task(t.Context(), id)
	}
	tasks["t_here002"] = &state.Task{ID: "t_here002", Agent: "sim", Status: state.StatusDone}
	res, err := Vote(t.Context(), d, g, tasks)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, ",") != "t_here001,t_host001,t_here002" {
		t.Errorf("asked %v", asked)
	}
	if res.Tally["t_host001"] != 2 || res.Tally["t_here002"] != 1 || res.Winner != "t_host001" {
		t.Errorf("tally %v, winner %q", res.Tally, res.Winner)
	}
	for _, b := range res.Ballots {
		if b.Error != "" {
			t.Errorf("ballot of %s: %q", b.Voter, b.Error)
		}
	}
	if p := prompts["t_host001"]; !strings.Contains(p, "Candidate t_here001") || strings.Contains(p, "Candidate t_host001") {
		t.Errorf("the host's candidate's prompt:\n%s", p)
	}
}
