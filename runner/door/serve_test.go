package door

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// TestOpenRunner: a door opened in a folder runs each request as the
// program given, in the task's folder (or the caller's inside it, never
// one outside), with the task's identity, and says its exit code.
func TestOpenRunner(t *testing.T) {
	base, err := os.MkdirTemp("/tmp", "rdoor")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	dir, task := filepath.Join(base, "door"), filepath.Join(base, "task")
	if err := os.MkdirAll(filepath.Join(task, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A stale socket of an earlier supervisor is replaced.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, SocketName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// A stand-in for runner: "status SCRIPT" runs SCRIPT (status is a
	// command the door carries).
	exe := filepath.Join(base, "runner")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nshift\neval \"$1\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	r := Runner{Exe: exe, TaskID: "t_door0001", Dir: task, StateDir: "/s", Socket: "sock", Environ: []string{"PATH=" + os.Getenv("PATH")}}
	opened := make(chan error, 1)
	go func() { opened <- Open(ctx, dir, r.Handle) }()
	sock := filepath.Join(dir, SocketName)
	call := func(cwd string, args ...string) Response {
		t.Helper()
		for deadline := clock.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			resp, err := Call(ctx, sock, Request{Args: args, Cwd: cwd})
			if err == nil {
				return resp
			}
			if clock.Now().After(deadline) {
				t.Fatalf("call: %v", err)
			}
		}
	}
	resp := call("", "status", `printf '%s %s %s %s' "$RUNNER_TASK_ID" "$RUNNER_CONFINED" "$RUNNER_STATE_DIR" "$PWD"`)
	if got := string(resp.Stdout); got != "t_door0001 t_door0001 /s "+task || resp.Code != 0 {
		t.Errorf("a request ran with %q, exit %d", got, resp.Code)
	}
	if resp := call(filepath.Join(task, "sub"), "status", "pwd"); strings.TrimSpace(string(resp.Stdout)) != filepath.Join(task, "sub") {
		t.Errorf("the caller's folder inside the task's: %q", resp.Stdout)
	}
	if resp := call(base, "status", "pwd"); strings.TrimSpace(string(resp.Stdout)) != task {
		t.Errorf("a folder outside the task's was taken: %q %q %d", resp.Stdout, resp.Stderr, resp.Code)
	}
	if resp := call("", "status", "exit 7"); resp.Code != 7 {
		t.Errorf("exit code %d, want 7: %q", resp.Code, resp.Stderr)
	}
	cancel()
	if err := <-opened; err != nil {
		t.Errorf("Open: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket outlived its door: %v", err)
	}
}
