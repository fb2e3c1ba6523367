package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestMonitorLeavesView: a screen that a profile's Leave rule matches (a
// view hiding the agent's state, as Codex's transcript browsing mode)
// ends no wait as it is: the wait presses the rule's keys, looks again,
// and the screen behind it (here the prompt box, once the pane read the
// key) decides. A view that is never left is pressed at most maxLeaves
// times.
func TestMonitorLeavesView(t *testing.T) {
	// The view until a key arrives (raw: one byte, Escape's ESC), then
	// the sim's prompt box.
	view := `printf '> task\nthe answer\n  Browsing transcript · ↑↓/jk scroll · ↵ rewind · esc back\n'; stty raw -echo; ` +
		`dd bs=1 count=1 >/dev/null 2>&1; stty sane; printf '\033[2J\033[H> task\nthe answer\n\n╭───╮\n│ > │\n╰───╯\n'; exec sleep 600`
	m, tc := monitorPane(t, view)
	p := *m.Profile
	p.Leave = []profile.LeaveView{{Pattern: `Browsing transcript · .*esc back`, Keys: []string{"Escape"}}}
	if err := p.Compile(); err != nil {
		t.Fatal(err)
	}
	m.Profile = &p
	waitScreen(t, tc, m.Pane, "Browsing transcript")
	if d := profile.Detect(&p, mustScreen(t, tc, m.Pane)); d.State != profile.StateUnknown || len(d.LeaveKeys) != 1 {
		t.Fatalf("the view reads %+v, want unknown with its leave keys", d)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	obs, err := m.Wait(ctx, GoalReady, clock.Now())
	if err != nil || obs.Detection.State != profile.StateReady {
		t.Fatalf("wait ended with %+v, %v; want the prompt behind the view", obs, err)
	}

	// A view that stays: pressed maxLeaves times, then left to the user.
	keys := filepath.Join(t.TempDir(), "keys")
	stay := `printf '  Browsing transcript · ↑↓/jk scroll · ↵ rewind · esc back\n'; stty raw -echo; ` +
		`while dd bs=1 count=1 2>/dev/null >> ` + keys + `; do :; done`
	m2, tc2 := monitorPane(t, stay)
	m2.Profile = &p
	waitScreen(t, tc2, m2.Pane, "Browsing transcript")
	sctx, scancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer scancel()
	if obs, err := m2.Wait(sctx, GoalReady, clock.Now()); err == nil {
		t.Fatalf("a view never left ended the wait: %+v", obs)
	}
	got, _ := os.ReadFile(keys)
	if n := strings.Count(string(got), "\x1b"); n != maxLeaves {
		t.Errorf("Escape pressed %d times (%q), want %d", n, got, maxLeaves)
	}
}

// waitScreen waits until the pane's screen shows want.
func waitScreen(t *testing.T, tc *tmuxctl.Client, pane, want string) {
	t.Helper()
	for end := clock.Now().Add(10 * time.Second); clock.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(mustScreen(t, tc, pane), want) {
			return
		}
	}
	t.Fatalf("the pane never showed %q:\n%s", want, mustScreen(t, tc, pane))
}

func mustScreen(t *testing.T, tc *tmuxctl.Client, pane string) string {
	t.Helper()
	s, err := tc.CaptureScreen(t.Context(), pane)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
