package monitor

import (
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// TestExitNotify: the channel closes when a process (here a child that is
// left a zombie, as an unreaped agent would be) exits, and not before.
func TestExitNotify(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd": // pidfd, kqueue
	default:
		t.Skip("no exit watch on " + runtime.GOOS)
	}
	cmd := exec.Command("sh", "-c", "read x")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited, stop, ok := exitNotify(cmd.Process.Pid)
	if !ok {
		t.Fatal("no pidfd for a live child")
	}
	defer stop()
	select {
	case <-exited:
		t.Fatal("exit reported for a live process")
	case <-time.After(100 * time.Millisecond):
	}
	stdin.Close() // sh reads EOF and exits; not reaped yet: a zombie
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("exit not reported")
	}
	_ = cmd.Wait()
	if _, _, ok := exitNotify(cmd.Process.Pid); ok {
		t.Error("a pidfd for a reaped process")
	}
}

// TestExitNotifyStop: a watch stopped before the exit reports nothing,
// and stopping twice is harmless.
func TestExitNotifyStop(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	exited, stop, ok := exitNotify(cmd.Process.Pid)
	if !ok {
		t.Skip("no exit watch here")
	}
	stop()
	stop()
	_ = cmd.Process.Kill()
	select {
	case <-exited:
		t.Fatal("an exit reported after stop")
	case <-time.After(200 * time.Millisecond):
	}
}
