package tmuxctl

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/filelock"
	"github.com/runner-cli/runner/internal/privdir"
)

// With every slot of the server taken (by other processes, as far as the
// flocks go), a call waits for one without its timeout running, then runs.
func TestCallsWaitForASlot(t *testing.T) {
	c := testServer(t)
	ctx := t.Context()
	shellPane(t, c, "w")
	c.timeout = 2 * time.Second // the call itself may take long on a loaded machine
	release, err := c.slot(ctx) // makes the directory
	if err != nil {
		t.Fatal(err)
	}
	release()
	var releases []func()
	for i := range MaxClients {
		// A separate open file each: held as another process would.
		release, err := filelock.Lock(ctx, filepath.Join(slotsDir(t, c), fmt.Sprintf("slot.%d", i)), false, time.Second)
		if err != nil {
			t.Fatalf("slot %d: %v", i, err)
		}
		releases = append(releases, release)
	}
	var freed atomic.Bool
	go func() {
		time.Sleep(3 * c.timeout)
		freed.Store(true)
		for _, r := range releases {
			r()
		}
	}()
	out, err := c.run(ctx, nil, "display-message", "-p", "ok")
	if err != nil {
		t.Fatalf("the call failed while it waited for a slot: %v", err)
	}
	if !freed.Load() {
		t.Fatal("the call ran while every slot was held")
	}
	if out != "ok\n" && out != "ok" {
		t.Errorf("output %q", out)
	}
}

// TestSlotsRefuseAnotherUsersDirectory: the slots' directory in the shared
// temporary directory, made first by someone else (not private, its slot
// files symlinks to files of their choosing), is not used: calls run
// unbounded, and no file is made where the symlinks point.
func TestSlotsRefuseAnotherUsersDirectory(t *testing.T) {
	c0 := testServer(t)
	shellPane(t, c0, "w")
	base := t.TempDir()
	t.Setenv("TMPDIR", base)
	t.Setenv("XDG_RUNTIME_DIR", "")
	privdir.Warnings = io.Discard
	c := New(c0.socket, WithConfig("/dev/null"), WithEnv(c0.env))
	sum := sha256.Sum256([]byte(c.socket))
	planted := filepath.Join(base, fmt.Sprintf("runner-tmux-%d", os.Getuid()), hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(planted), 0o755)
	if os.Getuid() == 0 {
		os.Chown(filepath.Dir(planted), 65534, 65534)
	}
	for i := range MaxClients {
		if err := os.Symlink(filepath.Join(base, fmt.Sprintf("chosen.%d", i)), filepath.Join(planted, fmt.Sprintf("slot.%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	out, err := c.run(t.Context(), nil, "display-message", "-p", "ok")
	if err != nil || strings.TrimSpace(out) != "ok" {
		t.Fatalf("a call with another user's slot directory: %q %v", out, err)
	}
	if d, err := privdir.Dir("tmux", c.slotsName); err == nil {
		t.Fatalf("slots in %s, another user's directory", d)
	}
	if m, _ := filepath.Glob(filepath.Join(base, "chosen.*")); len(m) > 0 {
		t.Fatalf("files made where the planted symlinks point: %v", m)
	}
}

// slotsDir is c's slots' directory (made by a call already).
func slotsDir(t *testing.T, c *Client) string {
	t.Helper()
	d, err := privdir.Dir("tmux", c.slotsName)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSlotsDirectoryRemovedMeanwhile: the slots' directory removed under a
// client that used it (a cleaner of /tmp, under a supervisor that lives
// for weeks) is made again by the next call, which runs bounded as before:
// it failed every later call ("lock …/slot.N: no such file or directory").
func TestSlotsDirectoryRemovedMeanwhile(t *testing.T) {
	c := testServer(t)
	shellPane(t, c, "w")
	dir := slotsDir(t, c)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	out, err := c.run(t.Context(), nil, "display-message", "-p", "ok")
	if err != nil || strings.TrimSpace(out) != "ok" {
		t.Fatalf("a call after its slots' directory was removed: %q %v", out, err)
	}
	if err := privdir.Check(dir); err != nil {
		t.Fatalf("the slots' directory was not made again: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "slot.*")); len(m) == 0 {
		t.Fatalf("no slot file in %s: the call ran unbounded", dir)
	}
}
