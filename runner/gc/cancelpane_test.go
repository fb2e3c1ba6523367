package gc

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

func TestCancelInterruptsTheAgent(t *testing.T) {
	w := newWorld(t)
	w.task("t_run00001", state.StatusRunning, 0, "", "%1")
	w.tc.add("%1", "api", "t_run00001")
	got, err := Cancel(t.Context(), w.d, "t_run00001", false)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != state.StatusCancelled || !strings.Contains(got.LastReason(), "cancelled by the user") {
		t.Errorf("cancelled %+v", got)
	}
	if strings.Join(w.tc.keys, ",") != "%1 Escape" || len(w.tc.killed) != 0 {
		t.Errorf("keys %q, closed %q; want the interrupt key, no window closed", w.tc.keys, w.tc.killed)
	}
	if strings.Join(w.core.notified, ",") != "t_run00001" {
		t.Errorf("notified %q", w.core.notified)
	}
	if _, err := Cancel(t.Context(), w.d, "t_run00001", false); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "--kill") {
		t.Errorf("cancelling an ended task: err = %v, want a usage error saying --kill", err)
	}
}

func TestCancelADeadPaneOrAGoneHost(t *testing.T) {
	w := newWorld(t)
	w.task("t_run00001", state.StatusRunning, 0, "", "%1")
	w.tc.keysErr = tmuxctl.ErrPaneDead
	if got, err := Cancel(t.Context(), w.d, "t_run00001", false); err != nil || got.Status != state.StatusCancelled {
		t.Errorf("a dead pane: %+v, %v; want cancelled all the same", got, err)
	}
	w.task("t_far00001", state.StatusRunning, 0, "gone", "%2")
	got, err := Cancel(t.Context(), w.d, "t_far00001", false)
	if err == nil || !strings.Contains(err.Error(), "unreachable") || got == nil {
		t.Errorf("a host gone: %+v, %v; want the task and the host's error", got, err)
	}
	if w.read("t_far00001").Status != state.StatusCancelled {
		t.Error("the task on a gone host is not recorded cancelled")
	}
	if _, err := Cancel(t.Context(), w.d, "t_nothing1", false); err == nil {
		t.Error("an unknown task: no error")
	}
}

func TestCancelKill(t *testing.T) {
	w := newWorld(t)
	w.task("t_run00001", state.StatusRunning, 0, "", "%1")
	w.tc.add("%1", "api", "t_run00001")
	w.tc.screens["%1"] = "working\nsession: s-42\n"
	got, err := Cancel(t.Context(), w.d, "t_run00001", true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(w.tc.killed, ",") != "%1" || len(w.tc.keys) != 0 {
		t.Errorf("closed %q, keys %q; want the window closed at once", w.tc.killed, w.tc.keys)
	}
	if got.Reclaimed.IsZero() || got.AgentSession != "s-42" || !strings.Contains(got.LastReason(), "window closed") {
		t.Errorf("killed %+v, want reclaimed with the session on its screen", got)
	}
}

func TestCancelKillOnAHost(t *testing.T) {
	w := newWorld(t)
	box := &fakeHost{h: &state.Host{Name: "box"}, tc: newTmux()}
	w.hosts["box"] = box
	w.task("t_far00001", state.StatusDone, time.Hour, "box", "%7")
	box.tc.add("%7", "api", "t_someone") // the server restarted: %7 is another's
	got, err := Cancel(t.Context(), w.d, "t_far00001", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(box.tc.killed) != 0 || len(w.warned) != 1 || !strings.Contains(w.warned[0], "is another window now") {
		t.Errorf("closed %q, warned %q; want another's window left alone, said", box.tc.killed, w.warned)
	}
	if got.Reclaimed.IsZero() {
		t.Error("not recorded reclaimed")
	}
	w.task("t_far00002", state.StatusDone, time.Hour, "box", "%8")
	box.tc.add("%8", "api", "t_far00002")
	if _, err := Cancel(t.Context(), w.d, "t_far00002", true); err != nil || strings.Join(box.tc.killed, ",") != "%8" {
		t.Errorf("its own window: closed %q, %v", box.tc.killed, err)
	}
	w.task("t_far00003", state.StatusDone, time.Hour, "gone", "%1")
	if _, err := Cancel(t.Context(), w.d, "t_far00003", true); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("a host gone: err = %v", err)
	}
}

func TestWorktreesKeptAndWhy(t *testing.T) {
	w := newWorld(t)
	now := w.d.Now()
	list := []worktree.Info{
		{Task: "t_run00001", Branch: "runner/t_run00001", Status: state.StatusRunning},
		{Task: "t_new00001", Branch: "runner/t_new00001", Status: state.StatusDone, Ended: now.Add(-time.Minute), Merged: true},
		{Task: "t_old00001", Branch: "runner/t_old00001", Status: state.StatusDone, Ended: now.Add(-2 * time.Hour)},
		{Branch: "runner/mine", Path: "/src/mine"},
		{Task: "t_mrg00001", Branch: "runner/t_mrg00001", Status: state.StatusDone, Ended: now.Add(-2 * time.Hour), Merged: true},
	}
	w.d.ListWorktrees = func(ctx context.Context) ([]worktree.Info, error) { return slices.Clone(list), nil }
	got, err := gcWorktrees(t.Context(), w.d, Options{OlderThan: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"the task is running", "ended less than 1h0m0s ago", "unmerged: runner merge t_old00001",
		"not a worktree of runner's", "no git in this test"} {
		if !strings.Contains(got[i].Kept, want) || got[i].Removed {
			t.Errorf("%s: kept %q (removed %v), want %q", got[i].Branch, got[i].Kept, got[i].Removed, want)
		}
	}
	got, _ = gcWorktrees(t.Context(), w.d, Options{OlderThan: time.Hour, DryRun: true, ForceWorktrees: true})
	if got[2].Kept != "" || got[4].Kept != "" || got[2].Removed {
		t.Errorf("a dry run with --force-worktrees: %+v, %+v; want both to go, neither removed", got[2], got[4])
	}
}

func TestStartAuto(t *testing.T) {
	w := newWorld(t)
	st := state.New()
	st.Tasks["t_old00001"] = &state.Task{ID: "t_old00001", Status: state.StatusDone, Ended: w.d.Now().Add(-2 * time.Hour), Tmux: state.TmuxTarget{Pane: "%1"}}
	var spawned []string
	w.d.Exe = "/usr/bin/runner"
	w.d.SpawnRunner = func(logPath string, extra []*os.File, args ...string) (int, error) {
		spawned = append(spawned, logPath+" "+strings.Join(args, " "))
		return 42, nil
	}
	if pid, err := StartAuto(w.d, st, 3*time.Hour); pid != 0 || err != nil || len(spawned) != 0 {
		t.Errorf("nothing due: %d, %v, spawned %q", pid, err, spawned)
	}
	pid, err := StartAuto(w.d, st, time.Hour)
	if pid != 42 || err != nil || len(spawned) != 1 || !strings.HasSuffix(spawned[0], "gc.log gc --auto --older-than 1h0m0s") {
		t.Errorf("due: %d, %v, spawned %q", pid, err, spawned)
	}
	w.d.SpawnRunner = func(string, []*os.File, ...string) (int, error) { return 0, errors.New("fork: resource busy") }
	if _, err := StartAuto(w.d, st, time.Hour); err == nil || !strings.Contains(err.Error(), "start the background gc: fork") {
		t.Errorf("a spawn that fails: err = %v", err)
	}
	w.d.Exe = ""
	if pid, err := StartAuto(w.d, st, time.Hour); pid != 0 || err != nil {
		t.Errorf("no binary: %d, %v", pid, err)
	}
}

// TestAutoStart: a command starts the background gc when a task in the
// store is due, never from an agent's task nor with close_after 0.
func TestAutoStart(t *testing.T) {
	w := newWorld(t)
	w.task("t_old00001", state.StatusDone, 2*time.Hour, "", "%1")
	var spawned []string
	w.d.Exe = "/usr/bin/runner"
	w.d.SpawnRunner = func(logPath string, extra []*os.File, args ...string) (int, error) {
		spawned = append(spawned, strings.Join(args, " "))
		return 42, nil
	}
	ctx := t.Context()
	if err := AutoStart(ctx, w.d, time.Hour, true); err != nil || len(spawned) != 0 {
		t.Errorf("from an agent's task: %v, spawned %q", err, spawned)
	}
	if err := AutoStart(ctx, w.d, 0, false); err != nil || len(spawned) != 0 {
		t.Errorf("close_after 0: %v, spawned %q", err, spawned)
	}
	if err := AutoStart(ctx, w.d, 3*time.Hour, false); err != nil || len(spawned) != 0 {
		t.Errorf("nothing due: %v, spawned %q", err, spawned)
	}
	if err := AutoStart(ctx, w.d, time.Hour, false); err != nil || strings.Join(spawned, ";") != "gc --auto --older-than 1h0m0s" {
		t.Errorf("due: %v, spawned %q", err, spawned)
	}
	w.d.SpawnRunner = func(string, []*os.File, ...string) (int, error) { return 0, errors.New("fork: resource busy") }
	if err := AutoStart(ctx, w.d, time.Hour, false); err == nil || !strings.Contains(err.Error(), "start the background gc: fork") {
		t.Errorf("a spawn that fails: %v", err)
	}
}

func TestAttributeGivesAStrayItsOwnTarget(t *testing.T) {
	g := &target{item: Task{ID: "t_a"}}
	out := attribute([]*target{g}, []proctree.Ended{{PID: 10}, {PID: 11}}, map[int]string{10: "t_a", 11: "t_lost0001"})
	if len(out) != 2 || len(g.item.Processes) != 1 || out[1].item.ID != "t_lost0001" || !out[1].item.Pruned {
		t.Errorf("attribute = %+v", out)
	}
	if ownPane(&state.Task{ID: "t_a", Tmux: state.TmuxTarget{Session: "s"}}, tmuxctl.PaneInfo{Session: "s", WindowName: "t_b"}) {
		t.Error("a pane of another window counts as the task's own")
	}
}
