package procinfo

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"golang.org/x/sys/unix"
)

// TestThisProcess reads this test's own process, as the system has it.
func TestThisProcess(t *testing.T) {
	p, ok := Get(os.Getpid())
	if !ok || p.PPID != os.Getppid() || p.UID != os.Getuid() || p.State == 'Z' || p.Start == 0 {
		t.Fatalf("Get(self) = %+v, %v", p, ok)
	}
	if sid, _ := unix.Getsid(0); p.SID != sid || p.PGID != syscall.Getpgrp() {
		t.Errorf("session %d, group %d; the system says %d, %d", p.SID, p.PGID, sid, syscall.Getpgrp())
	}
	all, err := All()
	same := func(q Proc) bool { return q.PID == p.PID && q.Start == p.Start && q.Comm == p.Comm }
	if err != nil || !slices.ContainsFunc(all, same) {
		t.Fatalf("All: %d processes, %v; this one among them: %v", len(all), err, slices.ContainsFunc(all, same))
	}
	env, err := Environ(os.Getpid())
	if err != nil || !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		t.Errorf("Environ(self): %d variables, %v", len(env), err)
	}
	exe, err := Executable(os.Getpid())
	if want, _ := os.Executable(); err != nil || exe != want {
		t.Errorf("Executable(self) = %q, %v; want %q", exe, err, want)
	}
	if BootID() == "" || !Readable() || len(Threads()) == 0 {
		t.Errorf("boot id %q, readable %v, threads %v", BootID(), Readable(), Threads())
	}
	if _, ok := LoadAverage(); !ok {
		t.Error("no load average")
	}
	if _, ok := Get(0); ok {
		t.Error("Get(0) is ok")
	}
}

// TestZombieExit: a child that exited and is not reaped yet is a zombie
// with its exit status.
func TestZombieExit(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   int
	}{{"exit 3", 3}, {"kill -9 $$", 137}} {
		cmd := exec.Command("sh", "-c", tc.script)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		deadline := clock.Now().Add(10 * time.Second)
		for {
			status, known, zombie := ZombieExit(pid)
			if zombie {
				if !known || status != tc.want {
					t.Errorf("%s: ZombieExit = %d, %v", tc.script, status, known)
				}
				break
			}
			if clock.Now().After(deadline) {
				t.Fatalf("%s: never a zombie", tc.script)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if p, ok := Get(pid); !ok || !p.Zombie() {
			t.Errorf("%s: Get = %+v, %v; want a zombie", tc.script, p, ok)
		}
		_ = cmd.Wait()
		if _, _, zombie := ZombieExit(pid); zombie {
			t.Errorf("%s: still a zombie once reaped", tc.script)
		}
	}
}
