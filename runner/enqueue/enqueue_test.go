package enqueue

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/breadth"
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/state"
)

func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "runner/breadth", "runner/plan", "runner/ports", "runner/projects", "runner/reconcile", "runner/record", "state")
}

// planned is a plan of req in dir, as a dispatch makes it.
func planned(t *testing.T, req plan.Request, dir string) *plan.Plan {
	t.Helper()
	req.Agent = "shell"
	p, err := plan.New(req, profile.Builtins())
	if err != nil {
		t.Fatal(err)
	}
	p.Resolve(projects.Place{Project: "api", Dir: dir})
	p.Lineage = plan.Lineage{Level: 1, Source: state.SourceUser}
	p.Finish([]string{"/bin/sh"}, nil)
	return p
}

// TestTask: the plan's task is recorded queued, owned by the process
// recording it, with the plan's place, agent, lineage and settings; one that
// waits says for what; a tree past its bounds is refused and nothing is
// recorded.
func TestTask(t *testing.T) {
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	w := Where{Store: st, Book: record.Book{Store: st}, Now: func() time.Time { return now }, Socket: "/tmp/s"}
	dir := t.TempDir()
	task, err := Task(t.Context(), planned(t, plan.Request{Text: "list the files"}, dir), w)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rec := got.Task(task.ID)
	if rec == nil || rec.Status != state.StatusQueued || rec.Agent != "shell" || rec.Dir != dir || rec.Project != "api" ||
		rec.SupervisorPID != os.Getpid() || rec.Tmux.Socket != "/tmp/s" || rec.Tmux.Window != task.ID || !rec.Created.Equal(now) ||
		rec.LastReason() != "dispatched by user" || !strings.Contains(string(rec.Settings), `"argv":["/bin/sh"]`) {
		t.Fatalf("recorded %+v", rec)
	}

	p := planned(t, plan.Request{Text: "after it"}, dir)
	p.After = []string{task.ID}
	waiting, err := Task(t.Context(), p, w)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(waiting.LastReason(), task.ID) {
		t.Errorf("a waiting task's reason %q names not what it waits for", waiting.LastReason())
	}

	child := planned(t, plan.Request{Text: "a child", Tree: breadth.Bounds{MaxTasks: 1}}, dir)
	child.Lineage = plan.Lineage{Parent: task.ID, Level: 2, Source: task.ID}
	if _, err := Task(t.Context(), child, w); err == nil {
		t.Fatal("a child past its tree's bounds was recorded")
	}
	if got, _ := st.Read(t.Context()); len(got.Tasks) != 2 {
		t.Errorf("%d tasks recorded, want 2", len(got.Tasks))
	}
}
