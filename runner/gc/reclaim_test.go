package gc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// here is a world with, on this machine: t_old00001 done 2 h ago in its
// window %1; t_shown001 done 2 h ago in %2, which a client shows;
// t_run00001 running in %3; t_new00001 done a minute ago in %5; and
// %4, session old, the window of t_gone0001, whose record was pruned
// (its option names this state directory), beside %6, a window named
// like a task of another state directory.
func here(t *testing.T) *world {
	w := newWorld(t)
	w.task("t_old00001", state.StatusDone, 2*time.Hour, "", "%1")
	w.task("t_shown001", state.StatusDone, 2*time.Hour, "", "%2")
	w.task("t_run00001", state.StatusRunning, 0, "", "%3")
	w.task("t_new00001", state.StatusDone, time.Minute, "", "%5")
	w.tc.add("%1", "api", "t_old00001")
	w.tc.add("%2", "api", "t_shown001")
	w.tc.add("%3", "api", "t_run00001")
	w.tc.add("%4", "old", "t_gone0001")
	w.tc.add("%5", "api", "t_new00001")
	w.tc.add("%6", "other", "t_theirs01")
	w.tc.option["%4"] = w.store.Dir()
	w.tc.option["%6"] = "/somewhere/else"
	w.tc.clients = []tmuxctl.ClientInfo{{TTY: "/dev/pts/3", WindowID: "@2"}}
	w.tc.dieOnKeys = true // the agents quit on their key
	return w
}

func ids(ts []Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	slices.Sort(out)
	return out
}

func TestRunRefusesANegativeAge(t *testing.T) {
	_, err := Run(t.Context(), newWorld(t).d, Options{OlderThan: -time.Second})
	if !errors.Is(err, fault.ErrUsage) {
		t.Errorf("err = %v, want a usage error", err)
	}
}

func TestRunDryRunChangesNothing(t *testing.T) {
	w := here(t)
	res, err := Run(t.Context(), w.d, Options{OlderThan: time.Hour, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Tasks); !slices.Equal(got, []string{"t_gone0001", "t_old00001"}) {
		t.Errorf("would reclaim %q, want the old task and the pruned one's window", got)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].ID != "t_shown001" || !strings.Contains(res.Skipped[0].Reason, "/dev/pts/3") {
		t.Errorf("skipped %+v, want t_shown001 for the client on /dev/pts/3", res.Skipped)
	}
	if len(w.tc.killed) != 0 || len(w.tc.keys) != 0 || !w.read("t_old00001").Reclaimed.IsZero() {
		t.Errorf("a dry run closed %q, sent %q, or recorded", w.tc.killed, w.tc.keys)
	}
	if !res.DryRun || res.Processes() != 0 || len(res.Worktrees) != 0 || res.SessionsClosed == nil {
		t.Errorf("result %+v", res)
	}
}

func TestRunClosesAndRecords(t *testing.T) {
	w := here(t)
	w.tc.screens["%1"] = "bye\nsession: abc-123\n"
	w.tc.dieOnKeys = true
	res, err := Run(t.Context(), w.d, Options{OlderThan: time.Hour, QuitWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(w.tc.killed)
	if !slices.Equal(w.tc.killed, []string{"%1", "%4"}) {
		t.Errorf("closed %q, want %%1 and %%4", w.tc.killed)
	}
	if !slices.Equal(w.tc.keys, []string{"%1 C-c"}) {
		t.Errorf("keys sent %q, want the quit key to t_old00001's agent alone", w.tc.keys)
	}
	old := w.read("t_old00001")
	if old.Reclaimed.IsZero() || old.AgentSession != "abc-123" {
		t.Errorf("t_old00001 recorded %+v, want reclaimed with its session", old)
	}
	for _, x := range res.Tasks {
		if x.ID == "t_old00001" && (!x.AgentQuit || !x.Resumable || !x.WindowClosed) {
			t.Errorf("t_old00001 in the result: %+v", x)
		}
	}
	for _, id := range []string{"t_shown001", "t_run00001", "t_new00001"} {
		if !w.read(id).Reclaimed.IsZero() {
			t.Errorf("%s was recorded reclaimed", id)
		}
	}
	if !slices.Equal(res.SessionsClosed, []string{"old"}) {
		t.Errorf("sessions closed %q, want old (its last window went)", res.SessionsClosed)
	}
	evs, _, err := w.store.ReadJournal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == "gc" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d gc events journaled, want 2", n)
	}
}

func TestRunAWindowThatWillNotClose(t *testing.T) {
	w := here(t)
	w.tc.killErr = errors.New("server exited unexpectedly")
	_, err := Run(t.Context(), w.d, Options{OlderThan: time.Hour})
	if err == nil || !strings.Contains(err.Error(), "close windows of finished tasks: server exited") {
		t.Errorf("err = %v", err)
	}
	// A window already gone counts as closed.
	w = here(t)
	w.tc.killErr = tmuxctl.ErrNotFound
	res, err := Run(t.Context(), w.d, Options{OlderThan: time.Hour})
	if err != nil || len(res.Tasks) != 2 || !res.Tasks[0].WindowClosed {
		t.Errorf("windows gone already: %+v, %v", res, err)
	}
}

func TestRunWaitsForNoOtherGC(t *testing.T) {
	w := here(t)
	lock, err := w.store.LockProject(t.Context(), gcLockKey, false)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	if _, err := Run(t.Context(), w.d, Options{NoWait: true}); !errors.Is(err, ErrBusy) {
		t.Errorf("err = %v, want ErrBusy", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Run(ctx, w.d, Options{}); err == nil || !strings.Contains(err.Error(), "wait for another gc") {
		t.Errorf("a wait cancelled: err = %v", err)
	}
}

func TestRunStateOrTmuxFails(t *testing.T) {
	w := here(t)
	w.core.reconcileErr = errors.New("state.json: unexpected end of JSON input")
	if _, err := Run(t.Context(), w.d, Options{}); err == nil || !strings.Contains(err.Error(), "unexpected end") {
		t.Errorf("a corrupt state: err = %v", err)
	}
	w = here(t)
	w.d.ListWorktrees = func(ctx context.Context) ([]worktree.Info, error) { return nil, errors.New("git: not found") }
	if res, err := Run(t.Context(), w.d, Options{DryRun: true}); err == nil || res == nil {
		t.Errorf("worktrees that cannot be listed: %v, %v; want the result so far and the error", res, err)
	}
}

func TestQuitAndReadADeadPane(t *testing.T) {
	tc := newTmux()
	tc.screens["%1"] = "session: xyz\n$ "
	prof := newWorld(t).d.Profiles[0]
	id, quit := quitAndRead(t.Context(), tc, prof, &tmuxctl.PaneInfo{ID: "%1", Dead: true}, time.Second)
	if id != "xyz" || quit || len(tc.keys) != 0 {
		t.Errorf("a dead pane: session %q, quit %v, keys %q; want its screen read, no key", id, quit, tc.keys)
	}
	tc.keysErr = tmuxctl.ErrPaneDead
	tc.add("%2", "api", "t_x")
	id, quit = quitAndRead(t.Context(), tc, prof, &tmuxctl.PaneInfo{ID: "%2"}, time.Second)
	if quit || id != "" {
		t.Errorf("keys refused: session %q, quit %v", id, quit)
	}
}

func TestGCRemote(t *testing.T) {
	w := newWorld(t)
	box := &fakeHost{h: &state.Host{Name: "box"}, tc: newTmux()}
	w.hosts["box"] = box
	w.task("t_far00001", state.StatusDone, 2*time.Hour, "box", "%7")
	w.task("t_far00002", state.StatusDone, 2*time.Hour, "box", "%8")
	w.task("t_far00003", state.StatusDone, 2*time.Hour, "gone", "%1")
	w.task("t_far00004", state.StatusDone, 2*time.Hour, "box", "%9") // its window is gone
	box.tc.add("%7", "api", "t_far00001")
	box.tc.add("%8", "api", "t_far00002")
	box.tc.clients = []tmuxctl.ClientInfo{{TTY: "/dev/pts/9", WindowID: "@8"}}
	res, err := Run(t.Context(), w.d, Options{OlderThan: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(box.tc.killed, []string{"%7"}) {
		t.Errorf("closed on box %q, want %%7", box.tc.killed)
	}
	if len(box.ran) != 1 || !strings.HasPrefix(box.ran[0], "rm -rf -- /home/u/.runner/t_far0000") || !strings.Contains(box.ran[0], "t_far00004") {
		t.Errorf("ran on box %q, want the task folders removed at once", box.ran)
	}
	skipped := map[string]string{}
	for _, s := range res.Skipped {
		skipped[s.ID] = s.Reason
	}
	if !strings.Contains(skipped["t_far00002"], "on host box is showing") || !strings.Contains(skipped["t_far00003"], "unreachable") {
		t.Errorf("skipped %v", skipped)
	}
	for id, want := range map[string]bool{"t_far00001": true, "t_far00004": true, "t_far00002": false, "t_far00003": false} {
		if got := !w.read(id).Reclaimed.IsZero(); got != want {
			t.Errorf("%s reclaimed %v, want %v", id, got, want)
		}
	}
}

func TestGCRemoteDryRun(t *testing.T) {
	w := newWorld(t)
	box := &fakeHost{h: &state.Host{Name: "box"}, tc: newTmux()}
	w.hosts["box"] = box
	w.task("t_far00001", state.StatusDone, 2*time.Hour, "box", "%7")
	box.tc.add("%7", "api", "t_far00001")
	res, err := Run(t.Context(), w.d, Options{OlderThan: time.Hour, DryRun: true})
	if err != nil || len(res.Tasks) != 1 || res.Tasks[0].Host != "box" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if len(box.tc.killed) != 0 || len(box.ran) != 0 || !w.read("t_far00001").Reclaimed.IsZero() {
		t.Errorf("a dry run closed %q, ran %q or recorded", box.tc.killed, box.ran)
	}
}
