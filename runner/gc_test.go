package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

// TestFindSessionOnRealExitScreens: each CLI's exit screen, captured from
// the real CLI, gives the id its resume hint shows.
func TestFindSessionOnRealExitScreens(t *testing.T) {
	for _, c := range []struct{ file, agent, want string }{
		{"screens-real/claude__exited__1.txt", "claude", "5a5e9095-66eb-425a-97c2-a1e0ea34a76a"},
		{"screens-real/codex__exited__1.txt", "codex", "01a20507-a9e7-7502-a195-76826930e443"},
		{"screens-real/gemini__exited__1.txt", "gemini", "2db69911-3419-41cb-8972-07229e75309f"},
		{"screens-real/opencode__exited__1.txt", "opencode", "ses_dfaeb44b2ffeCDwsXTbUdsYJrJ"},
	} {
		b, err := os.ReadFile(filepath.Join("profile", "testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.BuiltinProfile(c.agent)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.FindSession(string(b)); got != c.want {
			t.Errorf("%s: FindSession = %q, want %q", c.file, got, c.want)
		}
		// A screen without the hint (the agent at work) gives nothing.
		if got := p.FindSession("working…\n> prompt\n"); got != "" {
			t.Errorf("%s: FindSession on a screen without a hint = %q", c.agent, got)
		}
	}
	// Qwen's hint as on qwen__exited__1 (no capture of it in testdata).
	q, _ := profile.BuiltinProfile("qwen")
	if got := q.FindSession("  To continue this session, run qwen --resume fee2844d-a542-40b4-ac0d-17b9b0857688\n"); got != "fee2844d-a542-40b4-ac0d-17b9b0857688" {
		t.Errorf("qwen: FindSession = %q", got)
	}
	// The lowest hint wins (an older one scrolled up).
	s, _ := profile.BuiltinProfile("sim")
	if got := s.FindSession("Resume this session with: runner agent-sim --resume 0ld1\nx\nResume this session with: runner agent-sim --resume n3w2\n"); got != "n3w2" {
		t.Errorf("sim: FindSession = %q, want the lowest id", got)
	}
}

func TestResumeArgv(t *testing.T) {
	codex, _ := profile.BuiltinProfile("codex")
	argv := []string{"/bin/codex", "--no-daemon", "--model", "m", "-c", "notify=x"}
	want := []string{"/bin/codex", "--no-daemon", "resume", "ID", "--model", "m", "-c", "notify=x"}
	if got := codex.ResumeArgv(argv, "ID"); !slices.Equal(got, want) {
		t.Errorf("codex ResumeArgv = %q, want %q", got, want)
	}
	claude, _ := profile.BuiltinProfile("claude")
	if got := claude.ResumeArgv([]string{"/bin/claude", "--model", "m"}, "S"); !slices.Equal(got, []string{"/bin/claude", "--resume", "S", "--model", "m"}) {
		t.Errorf("claude ResumeArgv = %q", got)
	}
	if got := claude.ResumeArgv([]string{"/bin/claude"}, ""); got != nil {
		t.Errorf("ResumeArgv without a session = %q, want nil", got)
	}
	shell, _ := profile.BuiltinProfile("shell")
	if got := shell.ResumeArgv([]string{"/bin/bash"}, "S"); got != nil {
		t.Errorf("shell ResumeArgv = %q, want nil (no resume)", got)
	}
}

func TestProfileSessionKeysChecked(t *testing.T) {
	if _, err := profile.MergeProfile("x", nil, []byte(`{"command":["x"],"session_id":["--resume \\S+"]}`)); err == nil || !strings.Contains(err.Error(), "capture group") {
		t.Errorf("session_id without a group: err = %v", err)
	}
	if _, err := profile.MergeProfile("x", nil, []byte(`{"command":["x"],"resume":["--resume"]}`)); err == nil || !strings.Contains(err.Error(), profile.SessionPlaceholder) {
		t.Errorf("resume without the placeholder: err = %v", err)
	}
	if _, err := profile.MergeProfile("x", nil, []byte(`{"command":["x"],"resume":["-r","{session}"],"session_id":["-r (\\S+)"]}`)); err != nil {
		t.Errorf("a good resume: %v", err)
	}
}
