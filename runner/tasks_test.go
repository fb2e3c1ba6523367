package runner

import (
	"os"
	"os/exec"
	"testing"
	"time"
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
		deadline := time.Now().Add(10 * time.Second)
		for !isZombie(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("%q: pid %d never became a zombie", tc.script, pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if processAlive(pid) {
			t.Errorf("%q: a zombie counts as alive", tc.script)
		}
		st, known, ok := zombieExit(pid)
		if !ok || !known || st != tc.want {
			t.Errorf("%q: zombieExit = %d, %v, %v; want %d, true, true", tc.script, st, known, ok, tc.want)
		}
		_ = cmd.Wait()
		if processAlive(pid) {
			t.Errorf("%q: a reaped process counts as alive", tc.script)
		}
		if _, _, ok := zombieExit(pid); ok {
			t.Errorf("%q: a reaped process is still a zombie", tc.script)
		}
	}
	if !processAlive(os.Getpid()) || isZombie(os.Getpid()) {
		t.Error("this process is not alive")
	}
}
