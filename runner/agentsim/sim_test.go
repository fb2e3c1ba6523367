package agentsim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// nastyStrings are prompts that break naive delivery. None starts with a
// directive keyword, so each turn just acknowledges it.
func nastyStrings() []string {
	s := []string{
		"hello",
		"trailing semicolon;",
		"-leading dash",
		"--flag=value",
		"Enter",
		"C-c",
		"Escape",
		"$(echo pwned) `id` ${HOME} $HOME",
		"tab\tseparated\t\tfields\t",
		"crlf line one\r\ncrlf line two\r\n",
		"lf one\nlf two\nlf three",
		"\nstarts with newline",
		"ends with newline\n",
		"bare\rcarriage return",
		"   ",
		"unicode: héllo wörld 日本語 한국어 🎉👍🏽 e\u0301 ﬁ \u200d",
		`quotes 'single' "double" \backslash\ \\n`,
		"escape inside: \x1b[31mred\x1b[0m \x1b[A arrow \x1b[200~ nested start",
		"controls \x03 \x04 \x7f \x08 \x15 \x1a",
		"paste end lookalike \x1b[201 and \x1b[20",
		"ends with ESC\x1b",
		"a; b && c || d | e > f < g & h",
		"#!/bin/sh\necho 'multi'\n\n\nexit 0 # not a directive: too many words\n  exit nine ",
	}
	// A long line and a 64 KiB+ multi-line text with mixed scripts.
	s = append(s, strings.Repeat("long-line-", 1000))
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"word", "日本", "é", "🎉", ";", "-", "$(x)", "`y`", "\t", "'", "\"", " ", "\\"}
	var b strings.Builder
	for b.Len() < 70<<10 {
		b.WriteString(pieces[rng.IntN(len(pieces))])
		if rng.IntN(40) == 0 {
			b.WriteString([]string{"\n", "\r\n"}[rng.IntN(2)])
		}
	}
	return append(s, "big "+b.String())
}

func TestPasteRoundTripByteExact(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	p := startSim(t, Options{Record: rec, Dir: t.TempDir()})
	p.waitFor(readyBottom)
	want := nastyStrings()
	for _, s := range want {
		p.submit(s)
	}
	got := records(t, rec)
	if len(got) != len(want) {
		t.Fatalf("recorded %d prompts, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("prompt %d recorded as %q, want %q", i, trunc(got[i]), trunc(want[i]))
		}
	}
	p.send("\x04")
	p.wait(0)
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

func TestTypedInput(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	p := startSim(t, Options{Record: rec})
	p.waitFor(readyBottom)
	// Typed text, a backspace, an arrow key to ignore, "é" split across two
	// reads (the box shows the lone first byte as '?' in between), C-j for a
	// newline, a wide rune deleted with C-h.
	steps := []struct{ send, see string }{
		{"abX", "│ > abX"},
		{"\x7f", "│ > ab "},
		{"\x1b[D\xc3", "│ > ab?"},
		{"\xa9", "│ > abé"},
		{"\n", "│   "},
		{"next\ttab", "│   next tab"},
		{"日", "│   next tab日"},
		{"\x08", "│   next tab "},
		{"\r", "Working…"},
	}
	for _, st := range steps {
		p.send(st.send)
		p.waitFor(st.see)
	}
	p.waitFor(readyBottom)
	if got := records(t, rec); len(got) != 1 || got[0] != "abé\nnext\ttab" {
		t.Fatalf("typed prompt recorded as %q, want [\"abé\\nnext\\ttab\"]", got)
	}
	p.send("\x04")
	p.wait(0)
}

func TestDirectives(t *testing.T) {
	dir := t.TempDir()
	p := startSim(t, Options{Dir: dir})
	p.waitFor(readyBottom)
	p.submit("say hello there\nwrite sub/dir/f.txt some text\nfirst plain line\nsecond plain line\n" +
		"run sh -c 'echo out; echo err >&2; exit 3'\nrun sh -c 'pwd'\nrun no-such-program-xyz\nsay bye")
	out := p.output()
	for _, want := range []string{"> say hello there [+7 lines]", "hello there", "Wrote sub/dir/f.txt",
		"Done: first plain line", "out\r\n", "err\r\n", "exit status 3\r\n", dir, "run no-such-program-xyz:", "bye"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the turn's output:\n%q", want, out)
		}
	}
	if n := strings.Count(out, "Done:"); n != 1 {
		t.Errorf("%d Done: lines, want one per prompt", n)
	}
	if strings.Contains(out, "second plain line") && strings.Count(out, "Done: second") > 0 {
		t.Errorf("acknowledged the second plain line too")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "sub/dir/f.txt")); err != nil || string(b) != "some text\n" {
		t.Errorf("write: file holds %q, %v; want \"some text\\n\"", b, err)
	}
	// An empty prompt starts no turn: the box is drawn again, nothing else.
	p.setMark()
	p.send("\r")
	p.send("say after-empty\r")
	p.waitFor("> say after-empty")
	p.waitFor("after-empty\r\n")
	if n := strings.Count(p.output(), "Working…"); n < 2 {
		t.Errorf("spinner drawn %d times over two turns", n)
	}
	p.waitFor(readyBottom)
	p.send("\x04")
	p.wait(0)
}

func TestAsk(t *testing.T) {
	p := startSim(t, Options{})
	p.waitFor(readyBottom)
	p.setMark()
	p.paste("ask Create a.txt?\nask Create b.txt?\nask Create c.txt?\nask Create d.txt?\nask Create e.txt?")
	p.send("\r")
	answers := []struct{ keys, want string }{
		{"1", "answered: yes"},
		{"\r", "answered: yes"},
		{"\x1b[B\r", "answered: no"},
		{"\x1b", "answered: no"},
		{"2", "answered: no"},
	}
	for i, a := range answers {
		p.waitFor(fmt.Sprintf("Create %c.txt?", 'a'+i))
		p.waitFor("❯ 1. Yes")
		p.waitFor("  2. No")
		if a.keys == "\x1b[B\r" {
			p.send("\x1b[B")
			p.waitFor("❯ 2. No")
			p.send("\r")
		} else {
			p.send(a.keys)
		}
		p.waitFor(a.want)
	}
	p.waitFor(readyBottom)
	p.send("\x03")
	p.send("\x03")
	p.wait(0)
}

func TestTrust(t *testing.T) {
	for _, tt := range []struct {
		name, keys string
		code       int
	}{
		{"yes by 1", "1", -1}, {"yes by Enter", "\r", -1},
		{"no by 2", "2", 1}, {"no by Escape", "\x1b", 1}, {"no by Down Enter", "\x1b[B\r", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startSim(t, Options{Trust: true, Startup: 50 * time.Millisecond})
			p.waitFor("Do you trust the files in this folder?")
			p.waitFor("❯ 1. Yes, proceed")
			p.waitFor("  2. No, exit")
			if strings.Contains(p.output(), readyBottom) {
				t.Fatalf("prompt box drawn before the trust dialog was answered")
			}
			p.send(tt.keys)
			if tt.code == 1 {
				p.waitFor("Not trusted.")
				p.wait(1)
				return
			}
			p.waitFor(readyBottom)
			p.send("\x04")
			p.wait(0)
		})
	}
}

func TestInterrupt(t *testing.T) {
	p := startSim(t, Options{})
	p.waitFor(readyBottom)
	for _, k := range []string{"\x1b", "\x03"} {
		p.setMark()
		p.paste("sleep 1h\nsay never")
		p.send("\r")
		p.waitFor("Working…")
		p.send("typed while busy is ignored")
		p.send(k)
		p.waitFor("Interrupted.")
		p.waitFor("│ >  ") // an empty box: typing while busy was dropped
		p.waitFor(readyBottom)
	}
	p.submit("say after")
	if out := p.output(); strings.Contains(out, "never") && strings.Count(out, "never") > 2 {
		t.Errorf("interrupted turn went on: %q", out)
	}
	p.send("\x04")
	p.wait(0)
}

func TestSilentWritesNothing(t *testing.T) {
	p := startSim(t, Options{})
	p.waitFor(readyBottom)
	p.setMark()
	p.paste("silent 800ms\nsay woke")
	p.send("\r")
	start := len(p.output()) - len(p.since())
	p.waitFor("woke\r\n")
	turn := p.output()[start : len(p.output())-len(p.since())]
	// Eight spinner periods passed. Only these may show: the frame drawn at
	// submit, a tick racing the switch to silent, the redraw as silent ends
	// and a tick before "say woke" runs (a loaded machine); a spinner that
	// went on during the silence draws about eight.
	if n := strings.Count(turn, "Working…"); n > 4 {
		t.Errorf("spinner drawn %d times during silent 800ms:\n%q", n, turn)
	}
	// The spinner drawn at submit was erased when silent began.
	if !strings.Contains(turn, "(esc to interrupt)\r\x1b[J\r\n") {
		t.Errorf("spinner not erased for silent:\n%q", turn)
	}
	p.waitFor(readyBottom)
	p.send("\x04")
	p.wait(0)
}

func TestSpinnerCycles(t *testing.T) {
	p := startSim(t, Options{})
	p.waitFor(readyBottom)
	p.paste("sleep 1h")
	p.send("\r")
	for _, g := range spinnerGlyphs {
		p.waitFor(g + " Working… (esc to interrupt)")
	}
	p.send("\x1b")
	p.waitFor("Interrupted.")
	p.send("\x04")
	p.wait(0)
}

func TestExitAndCrash(t *testing.T) {
	for _, tt := range []struct {
		prompt, see string
		code        int
	}{
		{"say leaving\nexit 7\nsay never", "leaving", 7},
		{"exit 0", "", 0},
		{"crash", "panic: simulated crash\r\n\r\ngoroutine 1 [running]:", 2},
	} {
		t.Run(tt.prompt, func(t *testing.T) {
			p := startSim(t, Options{})
			p.waitFor(readyBottom)
			p.paste(tt.prompt)
			p.send("\r")
			p.waitFor(tt.see)
			p.wait(tt.code)
			if strings.Contains(p.output(), "never") && !strings.Contains(p.output(), "[+2 lines]") {
				t.Errorf("went on after exit")
			}
		})
	}
}

func TestQuitKeys(t *testing.T) {
	t.Run("C-c clears input, then twice exits", func(t *testing.T) {
		p := startSim(t, Options{})
		p.waitFor(readyBottom)
		p.send("some text")
		p.waitFor("│ > some text")
		p.send("\x03")
		p.waitFor("│ >  ")
		p.send("\x03")
		p.waitFor("Press Ctrl-C again to exit")
		p.send("\x03")
		p.wait(0)
	})
	t.Run("C-d with input does nothing", func(t *testing.T) {
		p := startSim(t, Options{})
		p.waitFor(readyBottom)
		p.send("x\x04")
		p.waitFor("│ > x")
		p.send("\x7f")
		p.waitFor("│ >  ")
		p.send("\x04")
		p.wait(0)
	})
}

func TestResumeRecallsTheSession(t *testing.T) {
	dir := t.TempDir()
	p := startSim(t, Options{SessionDir: dir, SessionID: "abc123"})
	p.waitFor(readyBottom)
	p.submit("say first words")
	p.send("\x04")
	p.waitFor(ResumeHint("abc123"))
	p.wait(0)

	q := startSim(t, Options{SessionDir: dir, SessionID: "abc123", Resumed: true})
	q.waitFor("Resumed session abc123")
	q.waitFor(readyBottom)
	q.setMark()
	q.paste("recall")
	q.send("\r")
	q.waitFor("Recall: say first words")
	q.waitFor(readyBottom)
	q.send("\x03")
	q.waitFor("Press Ctrl-C again to exit")
	q.send("\x03")
	q.waitFor(ResumeHint("abc123"))
	q.wait(0)

	r := startSim(t, Options{SessionDir: dir})
	r.waitFor(readyBottom)
	r.setMark()
	r.paste("recall")
	r.send("\r")
	r.waitFor("Recall: nothing earlier")
}

func TestSignalRestoresTerminal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			p := startSim(t, Options{})
			p.waitFor(readyBottom)
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			<-p.done
			// SIGTERM also cancels the context of the test's main (130).
			if p.code != 128+int(sig) && p.code != 130 {
				t.Errorf("exit code %d after %v", p.code, sig)
			}
			p.wait(p.code)
		})
	}
}

func TestResizeRedraws(t *testing.T) {
	p := startSim(t, Options{})
	p.waitFor("╭" + strings.Repeat("─", 98) + "╮")
	if err := setSize(p.ptmx, 60, 20); err != nil {
		t.Fatal(err)
	}
	p.waitFor("\x1b[2J")
	p.waitFor("╭" + strings.Repeat("─", 58) + "╮")
	p.send("\x04")
	p.wait(0)
}

func TestRecordAndHook(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.jsonl")
	hookOut := filepath.Join(dir, "hook.json")
	hook := []string{"env", "AGENTSIM_TEST_ROLE=hook", "HOOK_OUT=" + hookOut, os.Args[0]}
	p := startSim(t, Options{Dir: dir, Record: rec, Hook: hook, SessionID: "sess-1"})
	p.waitFor(readyBottom)
	p.submit("say one\nline two")
	var in hookInput
	waitUntil(t, "hook output", func() bool {
		b, err := os.ReadFile(hookOut)
		return err == nil && json.Unmarshal(b, &in) == nil
	})
	want := hookInput{HookEventName: "Stop", CWD: dir, SessionID: "sess-1", LastPrompt: "say one\nline two",
		LastAssistantMessage: "one\nDone: line two"}
	if in != want {
		t.Errorf("hook got %+v, want %+v", in, want)
	}
	if got := records(t, rec); len(got) != 1 || got[0] != "say one\nline two" {
		t.Errorf("records %q", got)
	}
	p.send("\x04")
	p.wait(0)

	// A failing hook prints one warning line and the sim goes on.
	failing := []string{"env", "AGENTSIM_TEST_ROLE=hook", "HOOK_OUT=" + hookOut, "HOOK_CODE=3", "HOOK_STDERR=first\nboom", os.Args[0]}
	p = startSim(t, Options{Dir: dir, Hook: failing})
	p.waitFor(readyBottom)
	// The hook runs as the turn's last step, before the box comes back.
	p.setMark()
	p.paste("hi")
	p.send("\r")
	p.waitFor("exit status 3: boom")
	p.waitFor(readyBottom)
	p.submit("say still alive")
	p.send("\x04")
	p.wait(0)
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := clock.Now().Add(waitLimit)
	for !ok() {
		if clock.Now().After(deadline) {
			t.Fatalf("no %s after %v", what, waitLimit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEscapeThenKeysInOneRead(t *testing.T) {
	p := startSim(t, Options{})
	p.waitFor(readyBottom)
	p.paste("sleep 1h")
	p.send("\r")
	p.waitFor("Working…")
	p.send("\x1bsay quick\r") // Escape and the next prompt arrive together
	p.waitFor("Interrupted.")
	p.waitFor("quick\r\n")
	p.waitFor(readyBottom)
	p.send("\x04")
	p.wait(0)
}
