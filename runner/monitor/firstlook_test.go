package monitor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/tmuxctl"
)

// simPrompt draws the sim's prompt box.
const simPrompt = `printf '╭───╮\n│ > │\n╰───╯\n'`

// looksAt is a tmux binary that logs when each capture-pane call starts
// (Unix nanoseconds, one per line) to the file it returns, then runs tmux.
func looksAt(t *testing.T) (bin, log string) {
	t.Helper()
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed")
	}
	dir := t.TempDir()
	bin, log = filepath.Join(dir, "tmux"), filepath.Join(dir, "looks")
	script := "#!/bin/sh\ncase \" $* \" in *' capture-pane '*) date +%s%N >>'" + log + "';; esac\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return bin, log
}

func readLooks(t *testing.T, log string) []time.Time {
	t.Helper()
	b, _ := os.ReadFile(log)
	var out []time.Time
	for _, l := range strings.Fields(string(b)) {
		ns, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			t.Fatalf("looks log: %q", l)
		}
		out = append(out, time.Unix(0, ns))
	}
	return out
}

// TestReadyWaitFirstLook: a ready wait on a pane that has drawn nothing
// yet (its transcript empty) makes no look at the pane until the pane
// writes, then finds its prompt; with a transcript that stays empty
// (nothing pipes to it) a look comes anyway, firstLookBy after the wait
// began, and finds the prompt drawn meanwhile. Where the files are polled
// (no inotify left) the first look comes at once, as before.
func TestReadyWaitFirstLook(t *testing.T) {
	bin, log := looksAt(t)
	drew := filepath.Join(t.TempDir(), "drew")
	m, tc := monitorPane(t, `sleep 0.15; : > '`+drew+`'; `+simPrompt+`; exec sleep 600`)
	m.TC = tmuxctl.New(tc.Socket(), tmuxctl.WithBinary(bin))
	ctx := t.Context()
	obs, err := m.Wait(ctx, GoalReady, clock.Now())
	if err != nil || obs.Detection.State != profile.StateReady {
		t.Fatalf("wait ended with %+v, %v; want the prompt", obs, err)
	}
	fi, err := os.Stat(drew)
	if err != nil {
		t.Fatal(err)
	}
	looks := readLooks(t, log)
	if len(looks) == 0 {
		t.Fatal("no look at the pane: the prompt was found how?")
	}
	for _, at := range looks {
		if at.Before(fi.ModTime()) {
			t.Errorf("a look at %s, %s before the pane drew anything", at.Format(time.StampMicro), fi.ModTime().Sub(at))
		}
	}

	// Where the files are polled (no inotify left), a write is seen up
	// to a poll late: the wait looks at once.
	noInotify = true
	t.Cleanup(func() { noInotify = false })
	bin3, log3 := looksAt(t)
	drew3 := filepath.Join(t.TempDir(), "drew")
	m3, tc3 := monitorPane(t, `sleep 0.15; : > '`+drew3+`'; `+simPrompt+`; exec sleep 600`)
	m3.TC = tmuxctl.New(tc3.Socket(), tmuxctl.WithBinary(bin3))
	if obs, err := m3.Wait(ctx, GoalReady, clock.Now()); err != nil || obs.Detection.State != profile.StateReady {
		t.Fatalf("wait with polled files ended with %+v, %v; want the prompt", obs, err)
	}
	fi3, err := os.Stat(drew3)
	if err != nil {
		t.Fatal(err)
	}
	if looks := readLooks(t, log3); len(looks) == 0 || !looks[0].Before(fi3.ModTime()) {
		t.Errorf("with polled files the first look came at %v, not at once (the pane drew at %s)", looks, fi3.ModTime().Format(time.StampMicro))
	}
	noInotify = false

	// The backstop: a transcript nothing writes to.
	m2, tc2 := monitorPane(t, simPrompt+`; exec sleep 600`)
	waitScreen(t, tc2, m2.Pane, "│ > │")
	m2.Transcript = filepath.Join(t.TempDir(), "never-written")
	if err := os.WriteFile(m2.Transcript, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	began := clock.Now()
	obs, err = m2.Wait(ctx, GoalReady, began)
	if err != nil || obs.Detection.State != profile.StateReady {
		t.Fatalf("wait on a transcript never written ended with %+v, %v; want the prompt", obs, err)
	}
	if d := clock.Since(began); d < firstLookBy {
		t.Errorf("the wait on a silent transcript ended after %s: it looked before firstLookBy (%s)", d, firstLookBy)
	}
}
