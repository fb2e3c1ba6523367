package tasks

import (
	"errors"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// spendState: three tasks of two projects, agents and days; t_c a child
// of t_a, t_d on host gpu with no project (its directory names it).
func spendState() *state.State {
	st := state.New()
	st.Projects["api"] = &state.Project{Name: "api", Dir: "/src/api"}
	day := func(d int) time.Time { return time.Date(2026, 3, d, 23, 30, 0, 0, time.UTC) }
	for _, t := range []*state.Task{
		{ID: "t_a", Project: "api", Agent: "claude", Text: "root", Status: state.StatusDone, Created: day(1), Ended: day(1),
			Spend: state.Spend{Input: 100, Output: 10, Turns: 1}},
		{ID: "t_b", Project: "web", Agent: "codex", Status: state.StatusDone, Created: day(2), Ended: day(2),
			Spend: state.Spend{Input: 500, Turns: 2}},
		{ID: "t_c", Project: "api", Agent: "codex", Parent: "t_a", Status: state.StatusRunning, Created: day(3),
			Spend: state.Spend{Output: 50, Turns: 1, Unknown: 1}},
		{ID: "t_d", Dir: "/srv/tools", Agent: "claude", Status: state.StatusDone, Created: day(3), Ended: day(3),
			Tmux: state.TmuxTarget{Host: "gpu"}, Spend: state.Spend{Cached: 7, Turns: 1}},
	} {
		st.Tasks[t.ID] = t
	}
	return st
}

func keys(rep *UsageReport) []string {
	var out []string
	for _, r := range rep.Rows {
		out = append(out, r.Key)
	}
	return out
}

func TestUsageGroupings(t *testing.T) {
	d := fakeDeps(newFakeStore(spendState()), &fakeTmux{})
	for _, c := range []struct {
		by   string
		want []string
	}{
		{"", []string{"web", "api", "tools"}}, // by project, most tokens first
		{ByAgent, []string{"codex", "claude"}},
		{ByDay, []string{"2026-03-01", "2026-03-02", "2026-03-03"}},
		{ByTask, []string{"t_b", "t_a", "t_c", "t_d"}},
		{ByTree, []string{"t_b", "t_a", "t_d"}},
		{ByHost, []string{"local", "gpu"}},
	} {
		rep, err := Usage(t.Context(), d, UsageOptions{By: c.by, Loc: time.UTC})
		if err != nil {
			t.Fatalf("by %q: %v", c.by, err)
		}
		if got := keys(rep); !equal(got, c.want) {
			t.Errorf("by %q: rows %q, want %q", c.by, got, c.want)
		}
		if rep.Tasks != 4 || rep.Total.Tokens() != 667 || rep.Total.Unknown != 1 {
			t.Errorf("by %q: %d tasks, %d tokens, %d unknown; want 4, 667, 1", c.by, rep.Tasks, rep.Total.Tokens(), rep.Total.Unknown)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestUsageTreeSumsChildren(t *testing.T) {
	rep, err := Usage(t.Context(), fakeDeps(newFakeStore(spendState()), &fakeTmux{}), UsageOptions{By: ByTree})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if r.Key == "t_a" && (r.Tasks != 2 || r.Text != "root" || r.Spend.Tokens() != 160) {
			t.Errorf("tree t_a = %+v, want 2 tasks, text root, 160 tokens", r)
		}
	}
}

func TestUsageDaysInZone(t *testing.T) {
	// 23:30 UTC is the next day two hours east.
	rep, err := Usage(t.Context(), fakeDeps(newFakeStore(spendState()), &fakeTmux{}), UsageOptions{By: ByDay, Loc: time.FixedZone("E2", 2*3600)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"2026-03-02", "2026-03-03", "2026-03-04"}; !equal(keys(rep), want) {
		t.Errorf("days = %q, want %q", keys(rep), want)
	}
}

func TestUsageFilters(t *testing.T) {
	d := fakeDeps(newFakeStore(spendState()), &fakeTmux{})
	since := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		opts  UsageOptions
		tasks int
	}{
		{"since: ended before it left out, running kept", UsageOptions{Since: since}, 3},
		{"a project", UsageOptions{Project: "api"}, 2},
		{"a host", UsageOptions{Host: "gpu"}, 1},
		{"this machine", UsageOptions{Host: state.HostLocal}, 3},
	} {
		rep, err := Usage(t.Context(), d, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if rep.Tasks != c.tasks {
			t.Errorf("%s: %d tasks, want %d", c.name, rep.Tasks, c.tasks)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	store := newFakeStore(spendState())
	d := fakeDeps(store, &fakeTmux{})
	if _, err := Usage(t.Context(), d, UsageOptions{By: "week"}); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("--by week: err = %v, want a usage error", err)
	}
	if _, err := Usage(t.Context(), d, UsageOptions{Project: "nosuch"}); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("unknown project: err = %v, want a usage error", err)
	}
	store.readErr = errors.New("state.json: corrupt")
	if _, err := Usage(t.Context(), d, UsageOptions{}); err == nil {
		t.Error("a state that cannot be read: no error")
	}
}

func TestTreeRootEndsOnACycle(t *testing.T) {
	a := &state.Task{ID: "t_a", Parent: "t_b"}
	b := &state.Task{ID: "t_b", Parent: "t_a"}
	byID := map[string]*state.Task{"t_a": a, "t_b": b}
	if r := treeRoot(a, byID, 2); r == nil {
		t.Error("no root")
	}
	if got := projectKey(&state.Task{}); got != "-" {
		t.Errorf("projectKey of a task with neither project nor dir = %q, want -", got)
	}
}
