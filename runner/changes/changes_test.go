package changes

import (
	"slices"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/state"
)

// TestMayBeTold: the panes looked at before a task's overlaps are recorded
// are its own and those of the tasks its files meet, done or still working
// (the task's own turn may end, done, between the look and the record:
// CI saw it then judged "done, its pane gone" and not told).
func TestMayBeTold(t *testing.T) {
	ch := state.Changes{Repo: "/r/.git", Files: []string{"a.go", "c.go"}}
	other := func(id string, st state.Status, repo string, files ...string) *state.Task {
		return &state.Task{ID: id, Status: st, Changes: &state.Changes{Repo: repo, Files: files}}
	}
	tasks := []*state.Task{
		{ID: "t_self", Status: state.StatusRunning},
		other("t_done", state.StatusDone, "/r/.git", "c.go"),
		other("t_working", state.StatusRunning, "/r/.git", "a.go", "b.go"),
		other("t_failed", state.StatusFailed, "/r/.git", "a.go"),
		other("t_elsewhere", state.StatusDone, "/s/.git", "a.go"),
		other("t_apart", state.StatusDone, "/r/.git", "b.go"),
	}
	var got []string
	for _, o := range mayBeTold(tasks, "t_self", ch) {
		got = append(got, o.ID)
	}
	if want := []string{"t_self", "t_done", "t_working"}; !slices.Equal(got, want) {
		t.Errorf("mayBeTold = %v, want %v", got, want)
	}
}

// TestImports keeps the package doc true: git, tmux and the supervisors
// come through Deps (the packages are named for their types).
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "gitsnap", "internal/clock", "internal/ctxtime", "runner/messaging", "runner/notice", "runner/overlap", "runner/record", "runner/settings", "state", "tmuxctl")
}

// TestFold: a look that found no file changed, on a task with no overlap,
// is a change of the task alone (for the end's write), which keeps what
// was merged and gives way to an overlap recorded meanwhile; files
// changed, an overlap to undo, or nothing new, and there is none.
func TestFold(t *testing.T) {
	none := &state.Changes{Repo: "/r/.git", Count: 0, Shared: true}
	if (&Look{t: &state.Task{ID: "t_a"}}).Fold() != nil {
		t.Error("nothing looked at (no snapshot): want no fold")
	}
	if (&Look{t: &state.Task{ID: "t_a"}, ch: &state.Changes{Repo: "/r/.git", Files: []string{"a"}, Count: 1}}).Fold() != nil {
		t.Error("files changed: want the long way (other tasks may be concerned)")
	}
	if (&Look{t: &state.Task{ID: "t_a", Overlaps: []state.Overlap{{Task: "t_b"}}}, ch: none}).Fold() != nil {
		t.Error("an overlap to undo: want the long way")
	}
	if (&Look{t: &state.Task{ID: "t_a", Changes: &state.Changes{Repo: "/r/.git", Shared: true}}, ch: none}).Fold() != nil {
		t.Error("recorded already: want nothing to do")
	}
	fold := (&Look{t: &state.Task{ID: "t_a"}, ch: none}).Fold()
	if fold == nil {
		t.Fatal("nothing changed, no overlap: want a fold")
	}
	merged := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	x := &state.Task{ID: "t_a", Changes: &state.Changes{Merged: merged}}
	if !fold(x) || x.Changes == nil || x.Changes.Repo != "/r/.git" || !x.Changes.Merged.Equal(merged) {
		t.Errorf("folded: %+v; want the look's changes, merged kept", x.Changes)
	}
	moved := &state.Task{ID: "t_a", Overlaps: []state.Overlap{{Task: "t_b"}}}
	if fold(moved) || moved.Changes != nil {
		t.Errorf("an overlap recorded meanwhile: folded %+v; want no change", moved.Changes)
	}
}
