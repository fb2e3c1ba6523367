package changes

import (
	"slices"
	"testing"

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
