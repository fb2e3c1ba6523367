package taskbook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/changes"
	"github.com/runner-cli/runner/runner/notice"
	"github.com/runner-cli/runner/runner/supervisor"
	"github.com/runner-cli/runner/state"
)

// said collects what b tells the user.
func said(b *Book) *[]string {
	var lines []string
	b.Log = func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	return &lines
}

// lastReason is the reason of task id's last status change.
func lastReason(t *testing.T, store *state.Store, id string) string {
	t.Helper()
	h := statetest.Read(t, store).Task(id).History
	if len(h) == 0 {
		t.Fatalf("task %s has no history", id)
	}
	return h[len(h)-1].Reason
}

// TestBudgeted: a budget of tokens or dollars on the task or any task
// above it counts (a turn budget does not); a parent loop or a parent
// gone ends the walk.
func TestBudgeted(t *testing.T) {
	task := func(id, parent, settings string) *state.Task {
		x := statetest.Supervised(id, parent, state.StatusRunning)
		x.Settings = []byte(settings)
		return x
	}
	store := statetest.WithTasks(t,
		task("t_top", "", `{"budget_usd": 2.5}`), task("t_mid", "t_top", `{}`), task("t_leaf", "t_mid", `{"max_turns": 3}`),
		task("t_tok", "", `{"budget_tokens": 1000}`), task("t_turns", "", `{"max_turns": 1}`),
		task("t_loopa", "t_loopb", `{}`), task("t_loopb", "t_loopa", `{}`), task("t_orphan", "t_gone", `{}`))
	for id, want := range map[string]bool{"t_top": true, "t_leaf": true, "t_tok": true, "t_turns": false,
		"t_loopa": false, "t_orphan": false, "t_missing": false} {
		if got := book(t, store, id).Budgeted(t.Context()); got != want {
			t.Errorf("Budgeted(%s) = %v, want %v", id, got, want)
		}
	}
}

// TestCommitNotes: what the commit did, or why there is none, is recorded
// in the task's history, the journal and the log; a task on its own
// branch commits there.
func TestCommitNotes(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-qm", "first")
	x := statetest.Supervised("t_aaaaaaaa", "", state.StatusDone)
	x.Dir, x.Text = dir, "change a"
	store := statetest.WithTasks(t, x)
	b := book(t, store, x.ID)
	lines := said(b)

	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Commit(t.Context())
	if r := lastReason(t, store, x.ID); !strings.HasPrefix(r, "no commit: ") || !strings.HasSuffix(r, "(dispatch --commit-all commits everything)") {
		t.Errorf("no snapshot to tell the task's changes by: %q; want the way to commit all", r)
	}
	b.Set.CommitAll = true
	b.Commit(t.Context())
	got := statetest.Read(t, store).Task(x.ID)
	if r := lastReason(t, store, x.ID); len(got.Commit) < 12 || r != "committed "+got.Commit[:12]+" on main" {
		t.Errorf("--commit-all: commit %q, note %q; want it committed on main", got.Commit, r)
	}
	b.Commit(t.Context())
	if r := lastReason(t, store, x.ID); r != "no commit: nothing changed" {
		t.Errorf("a clean tree: %q", r)
	}
	b.Git = func(context.Context, *state.Task) (context.Context, error) {
		return nil, errors.New("host h1 unreachable")
	}
	b.Commit(t.Context())
	if r := lastReason(t, store, x.ID); r != "no commit: host h1 unreachable" {
		t.Errorf("git unreachable: %q", r)
	}
	if len(*lines) != 4 || !strings.HasPrefix((*lines)[3], "task t_aaaaaaaa: no commit: host h1") {
		t.Errorf("said %q; want the four notes", *lines)
	}
}

// TestLookAtChangesSaysWhyNot: a look that failed is said when its record
// would be written, not lost.
func TestLookAtChangesSaysWhyNot(t *testing.T) {
	store := statetest.WithTasks(t, statetest.Supervised("t_aaaaaaaa", "", state.StatusRunning))
	b := book(t, store, "t_aaaaaaaa")
	lines := said(b)
	b.Look = func(context.Context, string) (*changes.Look, error) { return nil, errors.New("no snapshot") }
	record := b.LookAtChanges(t.Context())
	if len(*lines) != 0 {
		t.Errorf("said %q before the record", *lines)
	}
	record(t.Context())
	if len(*lines) != 1 || (*lines)[0] != "task t_aaaaaaaa: no snapshot" {
		t.Errorf("said %q; want the look's error", *lines)
	}
}

// TestEndTurnFailedDropsTheQueue: a turn that ends failed drops the
// task's pending messages (nobody will take them) and ends the task.
func TestEndTurnFailedDropsTheQueue(t *testing.T) {
	ctx := t.Context()
	store := statetest.WithTasks(t, statetest.Supervised("t_aaaaaaaa", "", state.StatusRunning))
	addMessage(t, store, "m_aaaaaaaa", "t_aaaaaaaa")
	code := 1
	o := supervisor.Outcome{Status: state.StatusFailed, Reason: "agent exited 1", Code: &code}
	more, final := book(t, store, "t_aaaaaaaa").EndTurn(ctx, o, supervisor.TurnText{}, true)
	if more != 0 || final == nil || final.Status != state.StatusFailed || final.ExitCode == nil || *final.ExitCode != 1 {
		t.Errorf("EndTurn = %d, %+v; want the task failed with code 1", more, final)
	}
	if m := statetest.Read(t, store).Messages["m_aaaaaaaa"]; m.Status == state.MessagePending {
		t.Errorf("message still %s after its task failed", m.Status)
	}
}

func addMessage(t *testing.T, store *state.Store, id, to string) {
	t.Helper()
	if err := store.Update(t.Context(), func(st *state.State) error {
		st.AddMessage(&state.Message{ID: id, From: state.SenderUser, To: to, Type: "info", Text: "hi", Status: state.MessagePending, Created: clock.Now()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSettleNotices: a notice the CLI's hook took within the turn is
// delivered; one merged again since its offer stays pending (taken whole
// with the next turn); either way no offer outlives the turn.
func TestSettleNotices(t *testing.T) {
	ctx := t.Context()
	id := "t_aaaaaaaa"
	store := statetest.WithTasks(t, statetest.Supervised(id, "", state.StatusRunning))
	if err := store.PrepareTaskFiles(id); err != nil {
		t.Fatal(err)
	}
	addMessage(t, store, "m_taken", id)
	addMessage(t, store, "m_again", id)
	dir, events := notice.Dir(store.TaskFile(state.FileHookDir, id)), store.TaskFile(state.FileEvents, id)
	for _, m := range []string{"m_taken", "m_again"} {
		if err := notice.Offer(dir, notice.Notice{Message: m, Text: m}); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := notice.Take(dir, events, "PostToolUse"); err != nil || out == nil {
		t.Fatalf("Take = %s, %v", out, err)
	}
	if err := store.Update(ctx, func(st *state.State) error { st.Messages["m_again"].Merged = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	b := book(t, store, id)
	SettleNotices(ctx, b.Record, id)
	st := statetest.Read(t, store)
	if m := st.Messages["m_taken"]; m.Status != state.MessageDelivered {
		t.Errorf("the taken notice's message is %s, want delivered", m.Status)
	}
	if m := st.Messages["m_again"]; m.Status != state.MessagePending {
		t.Errorf("a message merged again since its offer is %s, want pending", m.Status)
	}
	if ns := notice.List(dir); len(ns) != 0 {
		t.Errorf("offers left: %v", ns)
	}
}
