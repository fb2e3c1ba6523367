package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/tmuxctl"
)

// selfAsRunner returns a directory holding a "runner" symlink to the test
// binary; testscript.Main in TestMain runs Main when the binary is invoked
// under that name.
func selfAsRunner(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "runner")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func tmuxTestClient(t *testing.T) *tmuxctl.Client {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	dir, err := os.MkdirTemp("/tmp", "rdt")
	if err != nil {
		t.Fatal(err)
	}
	c := tmuxctl.New(filepath.Join(dir, "s"), tmuxctl.WithConfig("/dev/null"))
	t.Cleanup(func() {
		_ = c.KillServer(context.Background())
		os.RemoveAll(dir)
	})
	return c
}

// directiveWords are the sim's directives; generated lines must not start
// with one, or the sim would act on them (exit, run programs, sleep).
var directiveWords = []string{"sleep", "silent", "say", "write", "ask", "run", "exit", "crash", "hook"}

func defuse(line string) string {
	f := strings.Fields(line)
	if len(f) > 0 {
		for _, w := range directiveWords {
			if f[0] == w {
				return "x" + line
			}
		}
	}
	return line
}

// adversarialStrings returns n deterministic strings built to break naive
// delivery: tmux key names, trailing ';', leading '-', shell syntax, quotes,
// tabs, CRLF, wide and combining characters, very long lines, multi-line
// text and one 64 KiB text.
func adversarialStrings(n int) []string {
	pieces := []string{
		"Enter", "C-c", "C-m", "Escape", "Up", "BSpace", "M-x", "F1", ";", `\;`, "-t", "--", "-n",
		"$(rm -rf /tmp/nothing)", "`id`", "$HOME", "${PATH}", "'", `"`, `\`, `\\`, "\t", "\r\n", "\n", "\r",
		"é", "日本語テキスト", "한국어", "🎉", "👩‍💻", "e\u0301", "עברית", "Ωμέγα", "\u200b", "ｆｕｌｌ",
		"#{pane_id}", "%1", "{}", "&&", "||", "|", ">", "<<EOF", "*", "?", "!", "~", "^[[A", "\x1b[31mred\x1b[0m",
		"hello", "world", " ", "  ", "a", "Z", "0", "1", "2", "yes", "no",
	}
	rng := rand.New(rand.NewPCG(42, 7))
	out := []string{
		"x;", "-x", "Enter", "C-c", ";", "-", "--help", "$(echo pwned)", "`echo pwned`", "a\r\nb\r\n", "line1\nline2\n\nline4",
		"\ttabbed\t", strings.Repeat("長", 3000), strings.Repeat("0123456789", 1000), "trailing space ",
	}
	// One 64 KiB multi-line text.
	var big strings.Builder
	for big.Len() < 64*1024 {
		fmt.Fprintf(&big, "line %d: the quick brown fox; jumps -over `the` $(lazy) dog 🎉\n", big.Len())
	}
	out = append(out, big.String())
	for len(out) < n {
		var b strings.Builder
		k := 1 + rng.IntN(12)
		for range k {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			if rng.IntN(3) == 0 {
				b.WriteString(" ")
			}
		}
		if rng.IntN(20) == 0 {
			b.WriteString(strings.Repeat("long-", 300+rng.IntN(700)))
		}
		s := b.String()
		if strings.TrimSpace(s) == "" {
			s = "x" + s
		}
		out = append(out, s)
	}
	for i, s := range out {
		lines := strings.Split(s, "\n")
		for j, l := range lines {
			lines[j] = defuse(strings.TrimPrefix(l, "\r"))
			if strings.HasPrefix(l, "\r") {
				lines[j] = "\r" + lines[j]
			}
		}
		out[i] = strings.Join(lines, "\n")
	}
	return out
}

// emptyBox is the input line of the sim's ready box with nothing in it.
var emptyBox = regexp.MustCompile(`│ >\s+│`)

// waitReadyBox waits until the sim shows its ready box, empty, on the last
// rows. Empty: the sim records a prompt (and fsyncs it) before its turn
// starts and redraws, so for as long as the fsync takes, the box of the
// prompt just submitted is still on the screen with its text in it, and a
// paste then would come during the turn, where the sim drops what is typed
// (seen in CI: four lanes at once during an I/O stall).
func waitReadyBox(ctx context.Context, c *tmuxctl.Client, pane string) error {
	for {
		s, err := c.CaptureScreen(ctx, pane)
		if err != nil {
			return err
		}
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		if last := lines[len(lines)-1]; strings.HasPrefix(last, "╰") && !strings.Contains(s, "esc to interrupt") && emptyBox.MatchString(s) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sim in %s never showed its ready box: %w\n%s", pane, ctx.Err(), s)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// boxReadyNow reports whether the sim shows its empty ready box within a
// second.
func boxReadyNow(ctx context.Context, c *tmuxctl.Client, pane string) bool {
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return waitReadyBox(sctx, c, pane) == nil
}

func readRecord(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	// Only whole lines: the sim may be writing the last one as this reads
	// (a read can see part of a write in progress).
	lines := strings.Split(string(b), "\n")
	var got []string
	for _, l := range lines[:len(lines)-1] {
		var rec struct {
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("record line: %v", err)
		}
		got = append(got, rec.Prompt)
	}
	return got
}

// TestAdversarialDelivery pastes 520 hostile strings into the simulated
// agent through tmux, four panes at a time, and compares what the agent
// received with what was sent, byte for byte, but for the bytes that
// would act as keys (ESC, CR and the other controls but tab and newline),
// which never reach a pane (tmuxctl.PasteText).
func TestAdversarialDelivery(t *testing.T) {
	t.Parallel() // alongside the scripts: it waits more than it computes
	bin := selfAsRunner(t)
	c := tmuxTestClient(t)
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	strs := adversarialStrings(520)
	const lanes = 4
	dir := t.TempDir()
	var wg sync.WaitGroup
	var resends atomic.Int32
	errs := make([]error, lanes)
	for lane := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := filepath.Join(dir, fmt.Sprintf("rec%d.jsonl", lane))
			pane, err := c.Launch(ctx, tmuxctl.WindowSpec{Session: "adv", Cwd: dir, Size: tmuxctl.Size{Width: 120, Height: 40},
				Env: []string{"TERM=xterm-256color"}, RemainOnExit: true,
				Argv: []string{filepath.Join(bin, "runner"), "agent-sim", "--record", rec}})
			if err != nil {
				errs[lane] = err
				return
			}
			sent := 0
			for i := lane; i < len(strs); i += lanes {
				if err := waitReadyBox(ctx, c, pane); err != nil {
					errs[lane] = err
					return
				}
				if err := c.Send(ctx, pane, strs[i], tmuxctl.SendOptions{Enter: true, Raw: true, EnterDelay: 30 * time.Millisecond}); err != nil {
					errs[lane] = fmt.Errorf("string %d: %w", i, err)
					return
				}
				sent++
				// A paste that never reached the sim (seen on a loaded
				// machine: tmux took the command, the sim's box stayed
				// empty) is sent again once, when the box is still empty;
				// what arrives must still be byte-exact, and more than a
				// few resends fail the test.
				resent := false
				for since := clock.Now(); len(readRecord(t, rec)) < sent; {
					if ctx.Err() != nil {
						s, _ := c.CaptureScreen(context.Background(), pane)
						errs[lane] = fmt.Errorf("string %d (%q…) never recorded:\n%s", i, strs[i][:min(40, len(strs[i]))], s)
						return
					}
					if !resent && clock.Since(since) > 10*time.Second && boxReadyNow(ctx, c, pane) && len(readRecord(t, rec)) < sent {
						resent = true
						resends.Add(1)
						t.Logf("lane %d: string %d not recorded after 10s, its box empty: sent again", lane, i)
						if err := c.Send(ctx, pane, strs[i], tmuxctl.SendOptions{Enter: true, Raw: true, EnterDelay: 30 * time.Millisecond}); err != nil {
							errs[lane] = fmt.Errorf("string %d again: %w", i, err)
							return
						}
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := resends.Load(); n > 3 {
		t.Fatalf("%d of %d pastes never reached the sim and were sent again", n, len(strs))
	}
	bad := 0
	for lane := range lanes {
		got := readRecord(t, filepath.Join(dir, fmt.Sprintf("rec%d.jsonl", lane)))
		k := 0
		for i := lane; i < len(strs); i += lanes {
			if k >= len(got) {
				t.Fatalf("lane %d: %d prompts recorded, want more", lane, len(got))
			}
			if want, _ := tmuxctl.PasteText(strs[i]); got[k] != want {
				bad++
				if bad <= 5 {
					t.Errorf("string %d: sent %q\nreceived %q, want %q", i, clipQ(strs[i]), clipQ(got[k]), clipQ(want))
				}
			}
			k++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d strings arrived altered", bad, len(strs))
	}
	t.Logf("%d strings delivered byte-exact", len(strs))
}

func clipQ(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}
