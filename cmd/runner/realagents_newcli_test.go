//go:build realagents

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/state"
)

// TestRealAgentsNewCLIs runs pi, GitHub Copilot CLI and Factory Droid,
// whose profiles are agent files alone, through the model mock, from a fresh HOME and in a
// folder they have never seen: a dispatch whose turn writes a file with
// the CLI's own write tool (Copilot and Droid ask first: the trust dialog and the
// approval are answered by label, by --yes-trust and --approve-rule),
// ended by the profile's hook, then a follow-up.
func TestRealAgentsNewCLIs(t *testing.T) {
	for _, cli := range append(mockapi.NewCLIs(), mockapi.AddedCLIs()...) {
		t.Run(cli, func(t *testing.T) {
			write := &mockapi.FileWrite{Content: "hello from " + cli + "\n"} // Path: set once the project is made
			turns := []mockapi.Turn{
				{Match: "NEWCLI-WRITE", Write: write, Text: "I wrote hello.txt. Done."},
				{Match: "NEWCLI-FOLLOW", Text: "Follow-up answered."},
			}
			r := newRealRig(t, cli, turns, func(home string, files map[string]string) {
				for p := range files {
					if filepath.Base(p) == "config.json" && strings.Contains(p, ".copilot") {
						delete(files, p) // no folder trusted beforehand: --yes-trust answers
					}
					if filepath.Base(p) == "settings.json" && strings.Contains(p, ".factory") {
						var s map[string]any // Droid's: its models stay, no folder is trusted
						if err := json.Unmarshal([]byte(files[p]), &s); err != nil {
							t.Fatal(err)
						}
						delete(s, "trustedFolders")
						b, _ := json.Marshal(s)
						files[p] = string(b)
					}
				}
			})
			write.Path = filepath.Join(r.project, "hello.txt")
			args := []string{"dispatch", r.project, "--agent", cli, "--yes-trust", "--approve-rule", `(?i)create .*hello\.txt`, "--timeout", "3m", "--ready-timeout", "90s"}
			if cli == "copilot" || cli == "droid" {
				args = append(args, "--permissions", "ask") // pi has no asking mode: runner's default runs it in its own
			}
			out, errOut, code := r.run(append(args, "please do the NEWCLI-WRITE task now")...)
			t.Logf("%s dispatch: exit %d\nstdout:\n%s\nstderr:\n%s", cli, code, out, errOut)
			id := r.latestTask()
			task := r.status(id)
			events, _ := os.ReadFile(filepath.Join(r.stateDir, "events", id+".jsonl"))
			t.Logf("hook events:\n%s", events)
			defer func() {
				if t.Failed() {
					logTask(t, task)
					// The CLI's own session records, for the answer.
					recs, _ := filepath.Glob(filepath.Join(r.home, ".copilot", "session-state", "*", "events.jsonl"))
					for _, f := range recs {
						b, _ := os.ReadFile(f)
						for _, l := range strings.Split(string(b), "\n") {
							t.Logf("%s", textutil.Headline(l, 200))
						}
					}
				}
			}()
			if code != 0 || task.Status != state.StatusDone {
				t.Fatalf("exit %d, status %s (%s); want 0, done", code, task.Status, lastReason(task))
			}
			if b, err := os.ReadFile(filepath.Join(r.project, "hello.txt")); err != nil || string(b) != "hello from "+cli+"\n" {
				t.Errorf("hello.txt: %q, %v; want the mock's content written by the CLI's tool", b, err)
			}
			if !strings.Contains(lastReason(task), "(hook)") {
				t.Errorf("the turn ended by %q, want the profile's hook", lastReason(task))
			}
			if !strings.Contains(task.Answer, "I wrote hello.txt") {
				t.Errorf("answer %q, want the mock's", task.Answer)
			}
			// A follow-up turn in the same pane.
			out, errOut, code = r.run("send", id, "--timeout", "2m", "now the NEWCLI-FOLLOW turn please")
			task = r.status(id)
			if code != 0 || task.Status != state.StatusDone || !strings.Contains(task.Answer, "Follow-up answered.") {
				t.Fatalf("send: exit %d, status %s, answer %q\nstdout:\n%s\nstderr:\n%s", code, task.Status, task.Answer, out, errOut)
			}
		})
	}
}
