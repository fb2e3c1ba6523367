//go:build realagents

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// endLeftBehind ends the processes a CLI left running after its pane
// went, found by the test's own HOME in their environment: a daemon it
// detached from its pane (Cline 3.0.65's hub, `cline --cline-hub-daemon`,
// outlived a run by 1.5 h) is not ended by the tmux server's kill. Asked
// to go (SIGTERM), then, 2 s later, killed. The look is made again until
// one finds none: a CLI that the server's kill ends may start its daemon
// on its way out, after the first look (one was found left so, started
// as its test ended). Where there is no /proc, nothing is found.
func endLeftBehind(home string) {
	for round := 0; round < 5; round++ {
		pids := byHome(home)
		if len(pids) == 0 && round > 0 {
			return
		}
		endPids(pids)
		time.Sleep(300 * time.Millisecond)
	}
}

// byHome lists the processes with HOME=home in their environment.
func byHome(home string) []int {
	want := []byte("\x00HOME=" + home + "\x00")
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(append([]byte{0}, env...), want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// endPids asks pids to go (SIGTERM) and kills those left 2 s later.
func endPids(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	for deadline := clock.Now().Add(2 * time.Second); len(pids) > 0; time.Sleep(50 * time.Millisecond) {
		left := pids[:0]
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				left = append(left, pid)
			}
		}
		pids = left
		if clock.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
	}
}

// agentTmpDir is the temporary directory the CLIs of a test get (TMPDIR
// in their tmux server's environment): inside the test's home, removed
// with it. opencode and kilo (bun binaries) extract their native
// libraries (OpenTUI's, 5-13 MB) to it at every start and never remove
// them: in /tmp, 379 of them had gathered on a CI machine.
func agentTmpDir(t *testing.T, home string) string {
	t.Helper()
	dir := filepath.Join(home, "tmp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
