package dialog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

// The screens: the shared captures beside the checkout, and the pinned
// CLIs' captures of runner/profile.
const (
	sharedScreens = "../../../shared/screens"
	realScreens   = "../profile/testdata/screens-real"
)

func load(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		if dir == sharedScreens && os.Getenv("CI") == "" {
			t.Skipf("shared screens not found: %v", err)
		}
		t.Fatal(err)
	}
	return string(b)
}

func prof(t *testing.T, name string) *profile.Profile {
	t.Helper()
	p, err := profile.BuiltinProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// simAsk is the sim's "ask Ship it?" as it draws it, with its cursor on
// option sel (0 or 1).
func simAsk(sel int) string {
	mark := [2]string{"  ", "  "}
	mark[sel] = "❯ "
	return "> ask Ship it?\nShip it?\n" + mark[0] + "1. Yes\n" + mark[1] + "2. No\n"
}

// TestRead reads the dialogs of real screens: the line that asks and the
// options, keys and labels, the cursor marker stripped.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		dir, file, profile string
		question           string
		labels             []string // options 1, 2, …
	}{
		{realScreens, "claude__needs_input__1.txt", "claude", "Do you want to create hello.txt?",
			[]string{"Yes", "Yes, allow all edits during this session (shift+tab)", "No"}},
		{realScreens, "claude__needs_input__3.txt", "claude", "Detected a custom API key in your environment",
			[]string{"Yes", "No (recommended)"}}, // the cursor on 2
		{realScreens, "codex__needs_input__1.txt", "codex", "Would you like to run the following command?",
			[]string{"Yes, proceed (y)", "No, and tell Codex what to do differently (esc)"}},
		{realScreens, "codex__needs_input__2.txt", "codex", "Trust this folder? Codex can read, edit, and run files here, subject to your permission settings. Folder settings",
			[]string{"Trust and continue", "Back to Agent Command Center"}},
		{realScreens, "gemini__needs_input__1.txt", "gemini", "Do you trust the files in this folder?",
			[]string{"Trust folder (proj)", "Trust parent folder (ra)", "Don't trust"}},
		{realScreens, "gemini__needs_input__2.txt", "gemini", "? WriteFile  Writing to hello.txt",
			[]string{"Allow once", "Allow for this session", "Modify with external editor", "No, suggest changes (esc)"}},
		{sharedScreens, "claude__needs_input__7.txt", "claude", "touch x.txt",
			[]string{"Yes", "Yes, and always allow access to /home/an/cap/proj-claude1 from this project", "Yes, and switch to auto mode · auto mode handles these prompts for you", "No"}},
		{sharedScreens, "codex__needs_input__7.txt", "codex", "Would you like to run the following command?",
			[]string{"Yes, proceed (y)", "Yes, and don't ask again for commands that start with `touch other.txt` (p)", "No, and tell Codex what to do differently (esc)"}},
		{sharedScreens, "gemini__needs_input__5.txt", "gemini", "? Shell  touch hello.txt",
			[]string{"Allow once", "Allow for this session", "No, suggest changes (esc)"}},
		// The tips above Gemini's API key box are no menu of it.
		{sharedScreens, "gemini__needs_input__3.txt", "gemini", "Enter Gemini API Key", nil},
		// Claude's folder dialog drawn without numbers: no options.
		{sharedScreens, "claude__needs_input__5.txt", "claude", "Yes, I trust this folder", nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d, ok := Read(prof(t, tc.profile), load(t, tc.dir, tc.file))
			if !ok {
				t.Fatal("no dialog read")
			}
			if d.Question != tc.question {
				t.Errorf("question %q, want %q", d.Question, tc.question)
			}
			var labels []string
			for i, o := range d.Options {
				if want := itoa(i + 1); o.Key != want {
					t.Errorf("option %d has key %q, want %q", i, o.Key, want)
				}
				labels = append(labels, o.Label)
			}
			if strings.Join(labels, "|") != strings.Join(tc.labels, "|") {
				t.Errorf("labels %q, want %q", labels, tc.labels)
			}
			if len(d.Digest) != 16 {
				t.Errorf("digest %q: want 16 hex digits", d.Digest)
			}
			// The same screen with its escapes (a separate capture of
			// the same dialog) has the same digest.
			ansi := strings.TrimSuffix(tc.file, ".txt") + ".ansi"
			if _, err := os.Stat(filepath.Join(tc.dir, ansi)); err == nil {
				if e, ok := Read(prof(t, tc.profile), load(t, tc.dir, ansi)); !ok || e.Digest != d.Digest {
					t.Errorf("the .ansi capture reads %v (%v), want the digest %s", e, ok, d.Digest)
				}
			}
		})
	}
}

// TestReadSim reads the sim's ask dialog with its cursor on either option.
func TestReadSim(t *testing.T) {
	p := prof(t, "sim")
	d, ok := Read(p, simAsk(0))
	if !ok || d.Question != "Ship it?" || len(d.Options) != 2 || d.Options[0] != (Option{"1", "Yes"}) || d.Options[1] != (Option{"2", "No"}) {
		t.Fatalf("Read = %+v, %v", d, ok)
	}
	e, ok := Read(p, simAsk(1))
	if !ok || e.Digest != d.Digest {
		t.Errorf("the cursor on No: %+v, %v; want the digest %s", e, ok, d.Digest)
	}
	if _, ok := Read(p, "> hi\nanswer\n\n╭────╮\n│ > \n╰────╯\n"); ok {
		t.Error("a ready screen read as a dialog")
	}
}

// TestDigest: the digest stays when the cursor moves or the screen is
// drawn again the same (spaces, escapes), and changes when the question,
// what it is about or an option changes.
func TestDigest(t *testing.T) {
	for _, tc := range []struct {
		dir, file, profile string
		cursor             string // the cursor marker, moved from option 1 to the last
	}{
		{realScreens, "claude__needs_input__1.txt", "claude", "❯"},
		{realScreens, "codex__needs_input__1.txt", "codex", "›"},
		{realScreens, "gemini__needs_input__2.txt", "gemini", "●"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p := prof(t, tc.profile)
			screen := load(t, tc.dir, tc.file)
			d, ok := Read(p, screen)
			if !ok || len(d.Options) < 2 {
				t.Fatalf("Read = %+v, %v", d, ok)
			}
			same := map[string]string{
				"read again":          screen,
				"the cursor moved":    moveCursor(t, screen, tc.cursor, d.Options[len(d.Options)-1].Label),
				"trailing spaces":     strings.ReplaceAll(screen, "\n", "   \n"),
				"colours around text": strings.Replace(screen, d.Options[0].Label, "\x1b[1m"+d.Options[0].Label+"\x1b[0m", 1),
			}
			for what, s := range same {
				if e, ok := Read(p, s); !ok || e.Digest != d.Digest {
					t.Errorf("%s: %+v, %v; want the digest %s", what, e, ok, d.Digest)
				}
			}
			last := d.Options[len(d.Options)-1].Label
			changed := map[string]string{
				"the question":   strings.Replace(screen, d.Question, strings.Replace(d.Question, "hello", "evil", 1)+" now", 1),
				"an option":      replaceLast(screen, last, last+" and more"),
				"what it is for": strings.Replace(screen, "hello.txt", "secrets.txt", -1),
			}
			for what, s := range changed {
				if s == screen {
					continue // nothing of it on this screen
				}
				if e, ok := Read(p, s); ok && e.Digest == d.Digest {
					t.Errorf("%s changed: the digest stayed %s", what, d.Digest)
				}
			}
		})
	}
}

// moveCursor moves the menu's cursor marker from its option onto the
// line of label.
func moveCursor(t *testing.T, screen, marker, label string) string {
	t.Helper()
	lines := strings.Split(screen, "\n")
	from, to := -1, -1
	for i, l := range lines {
		if strings.Contains(l, marker+" 1.") {
			from = i
		}
		if strings.HasSuffix(strings.TrimRight(l, " │"), label) && strings.Contains(l, ". "+label) {
			to = i
		}
	}
	if from < 0 || to < 0 {
		t.Fatalf("no cursor %q or option %q on the screen", marker, label)
	}
	// Swap what stands before the two options' numbers.
	pf, pt := numberAt(lines[from], "1."), numberAt(lines[to], ". "+label)
	lines[from], lines[to] = lines[to][:pt]+lines[from][pf:], lines[from][:pf]+lines[to][pt:]
	return strings.Join(lines, "\n")
}

// numberAt is where the option number before text starts in l.
func numberAt(l, text string) int {
	i := strings.Index(l, text)
	for i > 0 && l[i-1] >= '0' && l[i-1] <= '9' {
		i--
	}
	return i
}

func replaceLast(s, old, repl string) string {
	i := strings.LastIndex(s, old)
	if i < 0 {
		return s
	}
	return s[:i] + repl + s[i+len(old):]
}

// TestOptions reads menus alone: a wrapped label's second line skipped,
// another number or a blank line ending the menu, a list above the
// last menu ignored.
func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		screen string
		want   string
	}{
		{"1. a\n2. b\n\nQ?\n❯ 1. Yes\n  2. No\n", "1 Yes|2 No"},
		{"Q?\n› 1. Yes, proceed\n    with care\n  2. No\n", "1 Yes, proceed|2 No"},
		{"Q?\n❯ 1. Yes\n  3. No\n", "1 Yes"},
		{"│ ● 1. Allow once     │\n│   2. Allow always   │\n", "1 Allow once|2 Allow always"},
		{"no menu here\n", ""},
	} {
		var got []string
		for _, o := range Options(tc.screen) {
			got = append(got, o.Key+" "+o.Label)
		}
		if strings.Join(got, "|") != tc.want {
			t.Errorf("Options(%q) = %q, want %q", tc.screen, got, tc.want)
		}
	}
}
