package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/state"
)

// snapshotRepo makes a hermetic git repository with one commit.
func snapshotRepo(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME": home, "GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
		"GIT_CEILING_DIRECTORIES": filepath.Dir(os.TempDir()),
	} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", argv...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", argv, err, out)
		}
	}
	return dir
}

// runCLI runs runner with args and stdin, returning exit code, stdout, stderr.
func runSnapCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestSnapshotCommands(t *testing.T) {
	dir := snapshotRepo(t)
	code, out, errOut := runSnapCLI(t, "", "snapshot", "take", dir, "--label", "before", "--json")
	if code != 0 {
		t.Fatalf("take: %d %s", code, errOut)
	}
	var s gitsnap.Snapshot
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.ID == "" || s.Label != "before" || s.Dirty {
		t.Fatalf("take --json: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("new\n"), 0o644)

	code, out, _ = runSnapCLI(t, "", "snapshot", "take", dir, "--id", "t_cli00001")
	if code != 0 || !strings.Contains(out, "snapshot t_cli00001") || !strings.Contains(out, "2 changed paths") {
		t.Fatalf("take: %d %q", code, out)
	}
	code, out, _ = runSnapCLI(t, "", "snapshot", "list", dir)
	if code != 0 || !strings.Contains(out, s.ID) || !strings.Contains(out, "t_cli00001") || !strings.Contains(out, "+1 ~1 -0") {
		t.Fatalf("list: %d %q", code, out)
	}
	code, out, _ = runSnapCLI(t, "", "snapshot", "show", "-C", dir, s.ID[:5])
	if code != 0 || !strings.Contains(out, "label:  before") || !strings.Contains(out, "(main)") {
		t.Fatalf("show: %d %q", code, out)
	}
	code, out, _ = runSnapCLI(t, "", "snapshot", "diff", "-C", dir, s.ID)
	if code != 0 || !strings.Contains(out, "2 files changed") || !strings.Contains(out, "+changed") {
		t.Fatalf("diff: %d %q", code, out)
	}
	code, out, _ = runSnapCLI(t, "", "snapshot", "diff", "-C", dir, s.ID, "--stat")
	if code != 0 || !strings.Contains(out, "b.txt") || strings.Contains(out, "+changed") {
		t.Fatalf("diff --stat: %d %q", code, out)
	}
	code, out, _ = runSnapCLI(t, "", "snapshot", "diff", "-C", dir, s.ID, "--against", "t_cli", "--json")
	var d gitsnap.DiffResult
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil || len(d.Files) != 2 || d.To != "t_cli00001" {
		t.Fatalf("diff --against --json: %d %q", code, out)
	}

	// Restore refuses without a terminal and without --yes, and changes nothing.
	code, _, errOut = runSnapCLI(t, "", "snapshot", "restore", "-C", dir, s.ID)
	if code != 2 || !strings.Contains(errOut, "--yes") || !strings.Contains(errOut, "not a terminal") {
		t.Fatalf("restore without --yes: %d %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); err != nil {
		t.Fatal("refused restore removed b.txt")
	}
	code, out, errOut = runSnapCLI(t, "", "snapshot", "restore", "-C", dir, s.ID, "--yes")
	if code != 0 || !strings.Contains(out, "undo with: runner snapshot restore") {
		t.Fatalf("restore --yes: %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); err == nil {
		t.Error("b.txt survived the restore")
	}
	undo := strings.Fields(out[strings.Index(out, "undo with:"):])
	code, _, errOut = runSnapCLI(t, "", "snapshot", "restore", "-C", dir, undo[len(undo)-1], "--yes")
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); code != 0 || string(b) != "new\n" {
		t.Fatalf("undo: %d %q, b.txt=%q", code, errOut, b)
	}

	code, out, _ = runSnapCLI(t, "", "snapshot", "prune", "-C", dir, "--older-than", "1h", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("prune 1h: %d %q", code, out)
	}
	code, out, _ = runSnapCLI(t, "", "snapshot", "prune", "-C", dir, "--older-than", "0d")
	if code != 0 || !strings.Contains(out, "4 snapshots older than 0d pruned") {
		t.Fatalf("prune 0d: %d %q", code, out)
	}
}

func TestSnapshotErrors(t *testing.T) {
	dir := snapshotRepo(t)
	notRepo := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"snapshot", "take", notRepo}, 2, "git init"},
		{[]string{"snapshot", "list", filepath.Join(notRepo, "missing")}, 2, "not a git repository"},
		{[]string{"snapshot", "take", notRepo, "--json"}, 2, `"exit_code":2`},
		{[]string{"snapshot", "show", "-C", dir, "nope"}, 2, "no such snapshot"},
		{[]string{"snapshot", "take", dir, "--id", "bad/id"}, 2, "invalid snapshot ID"},
		{[]string{"snapshot", "prune", "-C", dir, "--older-than", "soon"}, 2, "--older-than"},
		{[]string{"snapshot", "show"}, 2, "accepts 1 arg"},
		{[]string{"snapshot", "take", "a", "b"}, 2, "accepts at most 1 arg"},
	} {
		code, _, errOut := runSnapCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	if ents, _ := os.ReadDir(notRepo); len(ents) != 0 {
		t.Errorf("a failed snapshot wrote into the non-repo dir: %v", ents)
	}
	// git missing: exit 1 with a message saying so.
	t.Setenv("PATH", t.TempDir())
	code, _, errOut := runSnapCLI(t, "", "snapshot", "take", dir)
	if code != 1 || !strings.Contains(errOut, "git not found") {
		t.Errorf("git missing: %d %q", code, errOut)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"/tmp/x": "/tmp/x", "/a b": "'/a b'", "it's": `'it'\''s'`, "": "''"} {
		if got := transport.QuoteIfNeeded(in); got != want {
			t.Errorf("transport.QuoteIfNeeded(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSnapshotWaitsForACommitUnderWay: a foreground task's record names
// its snapshot from its start, and the snapshot's commit follows beside
// its first turn. `runner snapshot show|diff|restore ID` of a task at
// work whose commit is not written yet waits for it (issue 51: before, a
// script that looked within that moment was told "no such snapshot"); a
// task that ended has its snapshot committed, and one not found is an
// error at once.
func TestSnapshotWaitsForACommitUnderWay(t *testing.T) {
	dir := snapshotRepo(t)
	stateDir := filepath.Join(t.TempDir(), "state")
	t.Setenv("RUNNER_STATE_DIR", stateDir)
	store, err := state.Open(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	const atWork, ended = "t_snapw001", "t_snapw002"
	err = store.Update(t.Context(), func(s *state.State) error {
		for id, st := range map[string]state.Status{atWork: state.StatusRunning, ended: state.StatusDone} {
			s.Tasks[id] = &state.Task{ID: id, Agent: "sim", Dir: dir, Text: "work", Status: st,
				SupervisorPID: os.Getpid(), SnapshotRef: gitsnap.RefPrefix + id, Created: clock.Now()}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	committed := make(chan error, 1)
	go func() {
		// Well after the command's first look, as a commit beside a
		// turn comes after a look made right at the task's start.
		time.Sleep(300 * time.Millisecond)
		_, err := gitsnap.Take(context.Background(), dir, gitsnap.Options{ID: atWork})
		committed <- err
	}()
	code, out, errOut := runSnapCLI(t, "", "snapshot", "show", atWork, "-C", dir, "--json")
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	var s gitsnap.Snapshot
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.ID != atWork {
		t.Fatalf("show of a task at work whose commit came later: exit %d, %s %s", code, out, errOut)
	}
	for _, args := range [][]string{{"diff", atWork, "--stat"}, {"restore", atWork, "--yes"}} {
		if code, _, errOut := runSnapCLI(t, "", append([]string{"snapshot", "-C", dir}, args...)...); code != 0 {
			t.Errorf("snapshot %v: exit %d: %s", args, code, errOut)
		}
	}
	code, _, errOut = runSnapCLI(t, "", "snapshot", "show", ended, "-C", dir)
	if code == 0 || !strings.Contains(errOut, ended) {
		t.Errorf("show of an ended task without its snapshot: exit %d: %s", code, errOut)
	}
}
