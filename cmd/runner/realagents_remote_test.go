//go:build realagents

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/internal/sshtest"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestRealAgentsRemoteHook: pi's extension and Copilot CLI's plugin (a
// hook of more than one file: its manifest and its hooks) are written on a
// host, so a turn there ends by the agent's own hook, with its answer, as
// here: each CLI through the mock on a host reached over a real sshd on
// loopback (its own tmux server and runner binary "there").
func TestRealAgentsRemoteHook(t *testing.T) {
	for _, cli := range mockapi.NewCLIs() {
		t.Run(cli, func(t *testing.T) {
			needCLI(t, cli)
			srv := sshtest.Start(t)
			home, project := mockapi.Home(t), agentTempDir(t)
			turns := []mockapi.Turn{{Match: "REMOTE-HOOK", Shell: "echo there > there.txt", ToolText: toolText, Text: "REMOTE-HOOK-DONE"}}
			// The ssh session's PATH is the login's: the CLI's folder goes
			// in the profile's env, as a user's config would put it.
			h := newRealHarnessEnv(t, cli, home, project, turns, []string{"PATH=" + os.Getenv("PATH")})
			defer func() {
				if t.Failed() {
					t.Logf("mock requests:\n%s", h.mlog.String())
				}
			}()
			// And the CLI by its path: the host's check looks it up in the
			// login's PATH.
			abs, err := exec.LookPath(cli)
			if err != nil {
				t.Fatal(err)
			}
			cfgFile := filepath.Join(home, "runner-config.json")
			var cfg map[string]map[string]map[string]any
			if b, err := os.ReadFile(cfgFile); err != nil || json.Unmarshal(b, &cfg) != nil {
				t.Fatalf("the harness's config: %v", err)
			}
			cfg["profiles"][cli]["command"] = []string{abs}
			if b, err := json.Marshal(cfg); err != nil || os.WriteFile(cfgFile, b, 0o600) != nil {
				t.Fatalf("write the config: %v", err)
			}
			dir, err := os.MkdirTemp("/tmp", "rrh")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			rsock := filepath.Join(dir, "s")
			bin := filepath.Join(runnerOutsideTmp(t), "runner")
			if out, errOut, code, _ := h.run("host", "add", "loop", sshtest.Alias, "--ssh-arg", "-F", "--ssh-arg", srv.Config,
				"--runner", bin, "--socket", rsock, "--dir", filepath.Join(dir, "there")); code != 0 {
				t.Fatalf("host add: exit %d\n%s%s", code, out, errOut)
			}
			t.Cleanup(func() {
				_ = tmuxctl.New(rsock).KillServer(context.Background())
				_, _, _, _ = h.run("host", "rm", "loop")
			})
			out, errOut, code, took := h.run("dispatch", "--host", "loop", project, "--agent", cli, "--yes-trust", "--permissions", "auto",
				"--awareness", "off", "--timeout", "5m", "--ready-timeout", "3m", "please do the REMOTE-HOOK now")
			t.Logf("dispatch --host: exit %d in %s\nstdout:\n%s\nstderr:\n%s", code, took.Round(100*time.Millisecond), out, errOut)
			id := h.taskID(out)
			task := h.status(id)
			if code != 0 || task.Status != state.StatusDone {
				logTask(t, task)
				t.Fatalf("exit %d, %s; want 0, done", code, task.Status)
			}
			if strings.Contains(errOut, "no turn-end hook") {
				t.Errorf("no hook on the host: %s", errOut)
			}
			if r := lastReason(task); !strings.Contains(r, "(hook)") {
				logTask(t, task)
				t.Errorf("the turn ended by %q, not by %s's hook", r, cli)
			}
			if task.Answer != "REMOTE-HOOK-DONE" {
				t.Errorf("answer %q, want REMOTE-HOOK-DONE", task.Answer)
			}
			if b, err := os.ReadFile(filepath.Join(project, "there.txt")); err != nil || string(b) != "there\n" {
				t.Errorf("the tool did not run there: %q, %v", b, err)
			}
			_, _, _, _ = h.run("cancel", id, "--kill")
		})
	}
}
