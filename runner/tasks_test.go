package runner

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// An exited, unreaped child is a zombie: not alive, with its exit status
// readable (Linux /proc), so a supervisor killed under a non-reaping init
// is orphaned and an agent whose tmux lost its SIGCHLD is seen as exited.
func TestZombieIsDeadWithItsStatus(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	for _, tc := range []struct {
		script string
		want   int
	}{
		{"exit 5", 5},
		{"exit 0", 0},
		{"kill -TERM $$", 128 + 15},
	} {
		cmd := exec.Command("sh", "-c", tc.script)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		deadline := clock.Now().Add(10 * time.Second)
		for proctree.Alive(pid) {
			if clock.Now().After(deadline) {
				t.Fatalf("%q: pid %d never became a zombie", tc.script, pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if proctree.Alive(pid) {
			t.Errorf("%q: a zombie counts as alive", tc.script)
		}
		st, known, ok := tmuxctl.ZombieExit(pid)
		if !ok || !known || st != tc.want {
			t.Errorf("%q: zombieExit = %d, %v, %v; want %d, true, true", tc.script, st, known, ok, tc.want)
		}
		_ = cmd.Wait()
		if proctree.Alive(pid) {
			t.Errorf("%q: a reaped process counts as alive", tc.script)
		}
		if _, _, ok := tmuxctl.ZombieExit(pid); ok {
			t.Errorf("%q: a reaped process is still a zombie", tc.script)
		}
	}
	if !proctree.Alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
}

// TestReconcileUnownedQueued: a queued task whose dispatching process is
// gone is never left queued: one about to start failed (with the
// process named), one waiting for another task is orphaned (resumable);
// one whose process lives is left alone.
func TestReconcileUnownedQueued(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := dead.Process.Pid
	q := func(id string, pid int, after ...string) *state.Task {
		x := statetest.Supervised(id, "", state.StatusQueued)
		x.Tmux.Pane, x.SupervisorPID, x.After = "", pid, after
		return x
	}
	env := msgEnv(t, q("t_unowned1", gone), q("t_waiting1", gone, "t_unowned1"), q("t_mine0001", os.Getpid()))
	st, err := Reconcile(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]state.Status{"t_unowned1": state.StatusFailed, "t_waiting1": state.StatusOrphaned, "t_mine0001": state.StatusQueued} {
		if got := st.Tasks[id].Status; got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	h := st.Tasks["t_unowned1"].History
	if r := h[len(h)-1].Reason; !strings.Contains(r, "dispatching process "+strconv.Itoa(gone)+" is gone") {
		t.Errorf("reason %q", r)
	}
}

// TestFailUnstarted: a task this process recorded but could not start is
// failed with the reason; one a user cancelled meanwhile, or one another
// process owns, is left as it is.
func TestFailUnstarted(t *testing.T) {
	mine := statetest.Supervised("t_start0001", "", state.StatusStarting)
	other := statetest.Supervised("t_start0002", "", state.StatusQueued)
	other.SupervisorPID = os.Getppid()
	env := msgEnv(t, mine, other)
	failUnstarted(t.Context(), env, mine.ID, errors.New("state is busy"))
	failUnstarted(t.Context(), env, other.ID, errors.New("state is busy"))
	st, err := env.Store.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if x := st.Tasks[mine.ID]; x.Status != state.StatusFailed || !strings.Contains(x.History[len(x.History)-1].Reason, "could not start: state is busy") {
		t.Errorf("own task: %s %+v", x.Status, x.History)
	}
	if x := st.Tasks[other.ID]; x.Status != state.StatusQueued {
		t.Errorf("another process's task: %s", x.Status)
	}
}

// TestSettingsOf: no settings is the zero value; damaged ones are an error
// naming the task, never zero settings taken for real ones.
func TestSettingsOf(t *testing.T) {
	if set, err := settings.Of(&state.Task{ID: "t_a"}); err != nil || set.Timeout != 0 {
		t.Fatalf("none: %+v %v", set, err)
	}
	if set, err := settings.Of(&state.Task{ID: "t_a", Settings: []byte(`{"timeout":5000000000}`)}); err != nil || set.Timeout != 5*time.Second {
		t.Fatalf("a timeout: %+v %v", set, err)
	}
	if _, err := settings.Of(&state.Task{ID: "t_bad", Settings: []byte(`{"timeout":"soon"`)}); err == nil || !strings.Contains(err.Error(), "t_bad") {
		t.Fatalf("damaged: %v", err)
	}
}

// TestWaitSupervisorGone: a resume right after a task was recorded
// orphaned waits for the supervisor that recorded it to exit (it is on
// its way out), and gives up on one that stays past the bound.
func TestWaitSupervisorGone(t *testing.T) {
	start := func(d string) (*state.Task, *exec.Cmd) {
		cmd := exec.Command("sleep", d)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return &state.Task{ID: "t_x", SupervisorPID: cmd.Process.Pid, SupervisorStart: proctree.Identity(cmd.Process.Pid)}, cmd
	}
	task, cmd := start("0.3")
	go cmd.Wait() // reaped once it exits
	if !waitSupervisorGone(t.Context(), task, 30*time.Second) {
		t.Errorf("a supervisor that exits: still waited for")
	}
	task, cmd = start("30")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if waitSupervisorGone(t.Context(), task, 200*time.Millisecond) {
		t.Errorf("a supervisor that stays: reported gone")
	}
}
