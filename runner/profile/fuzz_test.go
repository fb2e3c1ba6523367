package profile

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fuzz targets for what comes into runner from outside: screens of agent
// CLIs, their hook events, the user's Codex config. Each is seeded from
// the real data in testdata and must never panic. `.ci/run` runs each
// for a short, fixed time (scripts/fuzz.sh); `go test` runs the seeds.

// FuzzDetect: any screen, any built-in profile: a detection, no panic.
// Detection time is bounded by construction: Go's regexp is linear in its
// input (a 1 MiB screen takes about 0.1 s through all eight profiles here).
func FuzzDetect(f *testing.F) {
	for _, dir := range []string{"testdata/screens-real", "testdata/screens"} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Add("\x1b[2J\x1b]0;title\x07> \n")
	profiles := Builtins()
	f.Fuzz(func(t *testing.T, screen string) {
		if len(screen) > 64<<10 {
			return // bigger than a pane's screen (200x50 cells, escapes and all)
		}
		for _, p := range profiles {
			d := Detect(p, screen)
			_ = DetectPane(p, screen, PaneInfo{})
			_ = MaskVolatile(p, screen)
			if d.State == "" {
				t.Fatalf("%s: no state for %q", p.Name, screen)
			}
		}
	})
}

// FuzzParseHookEvent: any line of an events file.
func FuzzParseHookEvent(f *testing.F) {
	f.Add(`{"time":"2026-01-02T03:04:05Z","event":"Stop","data":{"hook_event_name":"Stop","session_id":"sim","last_prompt":"say a","last_assistant_message":"a"}}`)
	f.Add(`{"time":"2026-01-02T03:04:05Z","event":"Stop"}`)
	if fh, err := os.Open("../spend/testdata/gemini-chat.jsonl"); err == nil { // a Gemini CLI chat file
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			f.Add(sc.Text())
		}
		fh.Close()
	}
	f.Fuzz(func(t *testing.T, line string) {
		ParseHookEvent(line)
	})
}

// FuzzCodexNotify: any config.toml: the notify program, nil, or an error;
// the values it returns are strings of the file.
func FuzzCodexNotify(f *testing.F) {
	for _, s := range []string{
		"notify = [\"notify-send\", \"Codex\"]\n",
		"model = \"x\"\nnotify = [\n  'a b',  # comment\n  \"c\\\"d\",\n]\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n",
		"notify = \"not an array\"\n",
		"notify = [\"unterminated\n",
		"[table]\nnotify = [\"in a table\"]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, toml string) {
		argv, err := codexNotify(strings.NewReader(toml), "config.toml")
		if err != nil && argv != nil {
			t.Fatalf("both a notify %q and an error %v", argv, err)
		}
	})
}

// FuzzAgentFile: any agent file, over a built-in profile or as a new
// agent: a compiled profile or a *FileError naming the file, never a
// panic; a profile that loaded classifies a screen.
func FuzzAgentFile(f *testing.F) {
	names, _ := fs.Glob(builtinFS, "agents/*.toml")
	for _, n := range names {
		if b, err := builtinFS.ReadFile(n); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{
		"busy = ['(unclosed']\n",
		"[hook]\nkind = 'flag'\nargs = ['--hook', '{command}']\n",
		"[[trust]]\npattern = 'x'\nkeys = ['Enter']\nchoose = 'y'\n",
		"enter_delay = 40\nbottom_lines = 3.5\n",
		"env = { A = 1 }\n",
		"trust = [{ pattern = 'a', keys = [] }]\n",
	} {
		f.Add(s)
	}
	base := Builtins()
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 64<<10 {
			return
		}
		for _, name := range []string{"claude", "fuzzed"} {
			file, err := ParseFile("/cfg/agents/"+name+".toml", []byte(text))
			var p *Profile
			if err == nil {
				var b *Profile
				if name == "claude" {
					b = base[0].clone()
				}
				p, err = file.Apply(b)
			}
			if err != nil {
				var fe *FileError
				if !errors.As(err, &fe) || fe.File == "" {
					t.Fatalf("error %v (%T): want a *FileError naming the file", err, err)
				}
				continue
			}
			if d := Detect(p, "> hi\n│ > \n"); d.State == "" {
				t.Fatalf("%s: no state", name)
			}
		}
	})
}
