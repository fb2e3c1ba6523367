package supervisor

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

func TestMatchRuleAndDialogLine(t *testing.T) {
	sim, err := profile.FindProfile(profile.Builtins(), "sim")
	if err != nil {
		t.Fatal(err)
	}
	rules := []*regexp.Regexp{regexp.MustCompile(`^Create \w+\.txt`), regexp.MustCompile(`(?s)Done: x.*Run tests`)}
	for _, tc := range []struct {
		question, rule, line string
	}{
		// The agent printed something above its question.
		{"Done: Other active runner tasks (2):\nCreate ok.txt?\n❯ 1. Yes\n  2. No", `^Create \w+\.txt`, "Create ok.txt?"},
		{"Create a.txt?\n❯ 1. Yes\n  2. No", `^Create \w+\.txt`, "Create a.txt?"},
		{"Delete everything?\n❯ 1. Yes\n  2. No", "", "Delete everything?"},
		// A rule over the whole text still works.
		{"Done: x\nRun tests?\n❯ 1. Yes\n  2. No", `(?s)Done: x.*Run tests`, "Run tests?"},
		// The trust dialog's own line is its question.
		{"Do you trust the files in this folder?\n❯ 1. Yes, proceed\n  2. No, exit", "", "Do you trust the files in this folder?"},
		{"", "", ""},
	} {
		if got := matchRule(rules, tc.question); got != tc.rule {
			t.Errorf("matchRule(%q) = %q, want %q", tc.question, got, tc.rule)
		}
		if got := dialogLine(sim, tc.question); got != tc.line {
			t.Errorf("dialogLine(%q) = %q, want %q", tc.question, got, tc.line)
		}
	}
	// Real dialogs: the line that asks, never a menu item.
	for _, tc := range []struct{ profile, screen, line string }{
		// Claude's folder dialog: its trust pattern is the first menu item.
		{"claude", "claude__needs_input__1.txt", "Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source"},
		// Claude's approval: no line asks above "Do you want to proceed?":
		// the last one says what it is about.
		{"claude", "claude__needs_input__3.txt", "Create hello.txt"},
	} {
		p, err := profile.BuiltinProfile(tc.profile)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "screens", tc.screen))
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%v (CI: the shared screens must be beside the checkout)", err)
			}
			t.Skipf("shared screens not found: %v", err)
		}
		d := profile.Detect(p, string(b))
		if d.State != profile.StateNeedsInput {
			t.Fatalf("%s: detected %s, want needs_input", tc.screen, d.State)
		}
		if got := dialogLine(p, d.Question); got != tc.line {
			t.Errorf("%s: dialogLine = %q, want %q (question %q)", tc.screen, got, tc.line, d.Question)
		}
	}
	// The pinned CLIs' dialogs (profile/testdata/screens-real).
	for _, tc := range []struct{ profile, screen, line string }{
		// Above the question, a preview of the file: the question itself
		// says what it is about.
		{"claude", "claude__needs_input__1", "Do you want to create hello.txt?"},
		{"claude", "claude__needs_input__3", "Detected a custom API key in your environment"},
		{"codex", "codex__needs_input__1", "Would you like to run the following command?"},
		{"gemini", "gemini__needs_input__2", "? WriteFile  Writing to hello.txt"},
	} {
		p, err := profile.BuiltinProfile(tc.profile)
		if err != nil {
			t.Fatal(err)
		}
		d := profile.Detect(p, screen(t, tc.screen))
		if got := dialogLine(p, d.Question); got != tc.line {
			t.Errorf("%s: dialogLine = %q, want %q (question %q)", tc.screen, got, tc.line, d.Question)
		}
	}
}

// TestComposerAndEcho checks the two screen signs delivery and the turn
// monitor read on real screens: the prompt still in the composer (never a
// finished turn) and the prompt in the transcript (a turn that began).
func TestComposerAndEcho(t *testing.T) {
	for _, tc := range []struct {
		profile, file, sig string
		composer, echo     bool
	}{
		// Qwen initialised with the prompt typed during start-up unsent.
		{"qwen", "qwen__ready__1", "Say hello. SAYTURN", true, false},
		{"qwen", "qwen__ready__2", "Say hello. SAYTURN", false, false},
		// Codex after a turn: the prompt above, the composer empty.
		{"codex", "codex__ready__2", "please answer SLOW with", false, true},
		{"codex", "codex__ready__2", "something else", false, false},
		// opencode's echo is in the same ┃ box as its composer: never
		// taken for the transcript (busy is its sign).
		{"opencode", "opencode__ready__2", "please answer SLOW with", false, false},
		// A start-up screen is neither, whatever it shows.
		{"qwen", "qwen__starting__2", "Say hello. SAYTURN", false, false},
		{"codex", "codex__starting__2", "Say hello. SAYTURN", false, false},
	} {
		t.Run(tc.file+"/"+tc.sig, func(t *testing.T) {
			p, err := profile.BuiltinProfile(tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join("..", "profile", "testdata", "screens-real", tc.file+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			if got := inComposer(p, string(b), tc.sig); got != tc.composer {
				t.Errorf("inComposer = %v, want %v", got, tc.composer)
			}
			if got := echoCount(p, string(b), tc.sig) > 0; got != tc.echo {
				t.Errorf("echoed = %v, want %v", got, tc.echo)
			}
		})
	}
}
