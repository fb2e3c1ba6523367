package doctor

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/push"
	"github.com/runner-cli/runner/state"
)

// TestWriteChecks: a line per check, the fix after the detail.
func TestWriteChecks(t *testing.T) {
	var b bytes.Buffer
	if err := WriteChecks(&b, []Check{{Name: "tmux", Status: CheckOK, Detail: "3.4"}, {Name: "git", Status: CheckFail, Detail: "missing", Fix: "install git"}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "ok tmux 3.4" || !strings.HasSuffix(lines[1], "missing  (fix: install git)") {
		t.Errorf("lines %q", lines)
	}
}

// TestPushChecks: a target never pushed, one pushed, one failing, the
// queue counted on each, and an error reading them as a warning.
func TestPushChecks(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	healths := []push.Health{
		{Target: "ntfy:a"},
		{Target: "ntfy:b", PushTargetStatus: state.PushTargetStatus{LastSent: at}},
		{Target: "ntfy:c", Failing: true, PushTargetStatus: state.PushTargetStatus{LastFailure: at, Task: "t_x", Error: "503"}},
	}
	cs := pushChecks(healths, 2, errors.New("outbox unreadable"))
	if len(cs) != 4 {
		t.Fatalf("checks %+v", cs)
	}
	if cs[0].Status != CheckOK || cs[0].Detail != "ntfy:a: nothing pushed yet; 2 push(es) queued" {
		t.Errorf("never pushed: %+v", cs[0])
	}
	if cs[1].Status != CheckOK || !strings.HasPrefix(cs[1].Detail, "ntfy:b: last pushed ") {
		t.Errorf("pushed: %+v", cs[1])
	}
	if cs[2].Status != CheckWarn || !strings.Contains(cs[2].Detail, "(task t_x): 503") || cs[2].Fix == "" {
		t.Errorf("failing: %+v", cs[2])
	}
	if cs[3].Status != CheckWarn || cs[3].Detail != "outbox unreadable" {
		t.Errorf("error: %+v", cs[3])
	}
	if pushChecks(nil, 0, nil) != nil {
		t.Error("checks without targets")
	}
}

// TestPushChecksConfig: no config or no targets, no line; a target of
// the config read from its state directory.
func TestPushChecksConfig(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"RUNNER_CONFIG": filepath.Join(dir, "none.json"), "RUNNER_STATE_DIR": filepath.Join(dir, "state")}
	getenv := func(k string) string { return env[k] }
	if cs := PushChecks(getenv); cs != nil {
		t.Errorf("no config: %+v", cs)
	}
}

// TestWriteAgents: installed or not, the hook, verified or not.
func TestWriteAgents(t *testing.T) {
	var b bytes.Buffer
	err := WriteAgents(&b, []AgentStatus{
		{Name: "claude", Installed: true, Path: "/bin/claude", Version: "2.1", Hook: "Stop", VerifiedVersion: "2.0", Command: []string{"claude", "--x"}},
		{Name: "aider", Hook: "none: the screen", Unverified: "never ran", Command: []string{"aider"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if got := strings.Join(strings.Fields(lines[1]), " "); got != "claude yes 2.1 yes 2.0 /bin/claude claude --x" {
		t.Errorf("claude: %q", got)
	}
	if got := strings.Join(strings.Fields(lines[2]), " "); got != "aider no - no (screen) unverified - aider" {
		t.Errorf("aider: %q", got)
	}
}
