package procinfo

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// leaderExitsEnv makes this test binary the helper of
// TestZombieLeaderHoldsLock: it takes an flock on the file the variable
// names, says so, and then its first thread exits alone.
const leaderExitsEnv = "PROCINFO_LEADER_EXITS"

func init() {
	path := os.Getenv(leaderExitsEnv)
	if path == "" {
		return
	}
	runtime.LockOSThread() // init runs on the first thread: keep it there
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		os.Exit(3)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		os.Exit(4)
	}
	go func() {
		for {
			time.Sleep(time.Hour) // the process lives on in its other threads
		}
	}()
	os.Stdout.WriteString("locked\n")
	syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0) // this thread alone
}

// TestZombieLeaderHoldsLock: a process whose first thread exited while its
// other threads run shows 'Z' in /proc/PID/stat, yet holds its files and
// their flock(2) locks. Get must not call it a zombie (it did: a test then
// took a supervisor for gone and met the project lock still held, issue
// 50's dispatch_exclusive flake).
func TestZombieLeaderHoldsLock(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "project.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaderExitsEnv+"="+lock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	pid := cmd.Process.Pid
	deadline := clock.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(pidDir(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := parseStat(b, -1); ok && p.State == 'Z' {
			break // the first thread has exited
		}
		if clock.Now().After(deadline) {
			t.Fatal("the helper's first thread did not exit")
		}
		time.Sleep(10 * time.Millisecond)
	}
	f, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("the lock is not held by the helper whose first thread exited: %v", err)
	}
	if p, ok := Get(pid); !ok || p.Zombie() {
		t.Errorf("Get(%d) = state %c, %v: called exited while its threads hold its lock", pid, p.State, ok)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("the lock after the helper is gone: %v", err)
	}
}
