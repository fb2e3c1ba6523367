package profile

import (
	"os"
	"testing"
)

// TestScreenAnswer takes the answer off real screens of each CLI (captured
// from the real CLIs answering through the mock): the answer text only,
// none of the welcome box, the echoed prompt, the tool calls, timers,
// rules or footers.
func TestScreenAnswer(t *testing.T) {
	for _, c := range []struct{ profile, screen, want string }{
		{"claude", "screens-real/claude__ready__3.txt", "I wrote hello.txt for you. Done."},
		{"codex", "screens-real/codex__ready__3.txt", "I wrote esc.txt for you. Done."},
		{"gemini", "screens-real/gemini__ready__2.txt", "This is a slow streamed answer with many words so that the busy state stays visible for a while MOCK-SLOW-DONE"},
		{"opencode", "screens-real/opencode__ready__2.txt", "This is a slow streamed answer with many words so that the busy state stays visible for a while MOCK-SLOW-DONE"},
		// A wide pane: the session sidebar (title, Context, tokens, cost,
		// LSP) right of the answer; the tail of a real dispatch's screen.
		{"opencode", "answer-opencode-sidebar.txt", "The answer streams word by word ANSWER-FIRST-LINE.\nA second line with the details ANSWER-DONE."},
		{"sim", "", ""},
	} {
		p, err := BuiltinProfile(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		screen := ""
		if c.screen != "" {
			b, err := os.ReadFile("testdata/" + c.screen)
			if err != nil {
				t.Fatal(err)
			}
			screen = string(b)
		}
		if got := ScreenAnswer(p, screen); got != c.want {
			t.Errorf("%s %s: answer %q, want %q", c.profile, c.screen, got, c.want)
		}
	}
	// The sim: the lines between the echoed prompt and the box, several
	// lines kept as they are.
	sim, _ := BuiltinProfile("sim")
	screen := "> old\nDone: old\n\n> say one\nline one\n  indented two\n\n╭────╮\n│ > │\n╰────╯\n"
	if got, want := ScreenAnswer(sim, screen), "line one\n  indented two"; got != want {
		t.Errorf("sim answer %q, want %q", got, want)
	}
	// Claude: a multi-line answer keeps its lines, without the marker's
	// indentation; the timer line is not part of it.
	claude, _ := BuiltinProfile("claude")
	screen = "❯ hi\n● First line\n  second line\n\n  - item\n✻ Baked for 3s\n────────\n❯\u00a0\n────────\n"
	if got, want := ScreenAnswer(claude, screen), "First line\nsecond line\n\n- item"; got != want {
		t.Errorf("claude answer %q, want %q", got, want)
	}
}
