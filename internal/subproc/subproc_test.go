package subproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/procinfo"
)

// gone waits until pid has ended (gone, or a zombie no one reaped yet),
// for at most a minute.
func gone(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 1200; i++ {
		p, ok := procinfo.Get(pid)
		if !ok || p.Zombie() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("process %d still runs", pid)
}

// alive reports whether pid runs (not a zombie).
func alive(pid int) bool {
	p, ok := procinfo.Get(pid)
	return ok && !p.Zombie()
}

// readPID waits for file to hold a pid and returns it.
func readPID(t *testing.T, file string) int {
	t.Helper()
	for i := 0; i < 1200; i++ {
		b, _ := os.ReadFile(file)
		if s := strings.TrimSpace(string(b)); strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("%s: %q", file, b)
			}
			return pid
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never got a pid", file)
	return 0
}

// startGroup runs script with sh in a Group whose context the returned
// function ends; Run's error arrives on the channel.
func startGroup(t *testing.T, script string, args ...string) (context.CancelFunc, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	cmd := Group(ctx, "sh", append([]string{"-c", script, "sh"}, args...)...)
	done := make(chan error, 1)
	go func() { done <- Run(cmd) }()
	return cancel, done
}

// TestGroupIgnoresTERM: a child that ignores SIGTERM (and its own child,
// which inherits that) is killed with the group after Grace.
func TestGroupIgnoresTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out Grace")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cancel, done := startGroup(t, `trap '' TERM; sleep 300 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; while :; do sleep 1; done`, pidFile)
	// The file is written whole (a rename); its line ends in a newline.
	sleeper := readPID(t, pidFile)
	if !alive(sleeper) {
		t.Fatalf("the sleep %d does not run", sleeper)
	}
	cancel()
	err := <-done
	var se *Error
	if !errors.As(err, &se) || se.Program != "sh" {
		t.Fatalf("Run: %v, want an *Error of sh", err)
	}
	if _, ok := ExitCode(err); ok {
		t.Errorf("a killed child has an exit code: %v", err)
	}
	gone(t, sleeper)
}

// TestGroupGrandchild: a grandchild left in the group (the child exits
// at SIGTERM, the grandchild ignores it and holds the pipe) is killed
// too, and Wait does not wait for it past PipeWait.
func TestGroupGrandchild(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out Grace")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cancel, done := startGroup(t, `(trap '' TERM; exec sleep 300) & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; wait`, pidFile)
	grandchild := readPID(t, pidFile)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("Run of a cancelled group: no error")
	}
	gone(t, grandchild)
}

// TestGroupEndsAtTERM: a child that stops at SIGTERM is ended by it,
// with the grandchildren of its group.
func TestGroupEndsAtTERM(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cancel, done := startGroup(t, `sleep 300 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; wait`, pidFile)
	grandchild := readPID(t, pidFile)
	cancel()
	err := <-done
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Run: %v, want an exit error inside", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGTERM {
		t.Errorf("ended by %v, want SIGTERM", ee)
	}
	gone(t, grandchild)
}

// TestGroupLeavesGrandchildOnExit: a child that exits by itself leaves
// what it started (a detached dispatch's supervisor) running.
func TestGroupLeavesGrandchildOnExit(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	_, done := startGroup(t, `sleep 300 >/dev/null 2>&1 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"`, pidFile)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, pidFile)
	if !alive(pid) {
		t.Fatal("the child's exit ended its grandchild")
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// TestRunStderr: the error wraps the exit error and keeps stderr, also
// when the caller reads stderr itself; stdout is not in it.
func TestRunStderr(t *testing.T) {
	ctx := t.Context()
	err := Run(Command(ctx, "sh", "-c", "echo out; echo first >&2; echo the cause >&2; exit 3"))
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("Run: %v, want an *Error", err)
	}
	if se.Stderr != "first\nthe cause" || !strings.Contains(err.Error(), "sh: exit status 3: the cause") {
		t.Errorf("stderr %q, error %q", se.Stderr, err)
	}
	if code, ok := ExitCode(err); !ok || code != 3 {
		t.Errorf("ExitCode: %d %v, want 3", code, ok)
	}
	var mine strings.Builder
	cmd := Command(ctx, "sh", "-c", "echo mine >&2; exit 1")
	cmd.Stderr = &mine
	if err := Run(cmd); !errors.As(err, &se) || se.Stderr != "mine" || mine.String() != "mine\n" {
		t.Errorf("a caller's stderr: %q, error %v", mine.String(), err)
	}
	out, err := Output(Command(ctx, "sh", "-c", "echo out; echo err >&2"))
	if err != nil || string(out) != "out\n" {
		t.Errorf("Output: %q %v", out, err)
	}
	if err := Run(Command(ctx, "/nonexistent/prog")); !errors.As(err, &se) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing program: %v, want an *Error wrapping ErrNotExist", err)
	}
}

// TestStderrTail: an *Error keeps the end of a long stderr, not more.
func TestStderrTail(t *testing.T) {
	err := Run(Command(t.Context(), "sh", "-c", "seq 1 20000 >&2; exit 1"))
	var se *Error
	if !errors.As(err, &se) || len(se.Stderr) > StderrMax || !strings.HasSuffix(se.Stderr, "\n20000") {
		t.Fatalf("%d bytes kept, ending %q", len(se.Stderr), se.Stderr[max(0, len(se.Stderr)-10):])
	}
}

// TestKillGroupGone: a group that is gone is os.ErrProcessDone.
func TestKillGroupGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := KillGroup(cmd.Process.Pid); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("KillGroup of a gone group: %v", err)
	}
	if err := KillGroup(1); err == nil {
		t.Error("KillGroup(1): no error")
	}
}
