package profile

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sharedScreens holds the real, labelled screens of real CLIs. In CI the
// shared directory sits beside the checkout; this test runs in <repo>/runner.
const sharedScreens = "../../../shared/screens"

// fixture is one labelled screen capture.
type fixture struct {
	file    string // path
	tool    string // claude, codex, ..., bash, python3, sim
	label   string // the state label from labels.tsv or the file name
	info    PaneInfo
	hasInfo bool
}

// toolProfile maps the tool that drew a screen to the profile that must
// classify it: plain programs run in a shell are the shell profile's.
var toolProfile = map[string]string{
	"claude": "claude", "codex": "codex", "gemini": "gemini", "opencode": "opencode", "qwen": "qwen", "pi": "pi", "copilot": "copilot",
	"bash": "shell", "python3": "shell", "less": "shell", "git": "shell", "vim": "shell", "sim": "sim",
}

// shellExpect overrides labels where the shell profile's view differs from
// the program's own: the shell profile asks "is the task's command line
// still running, waiting for the user, or back at the prompt?".
var shellExpect = map[string]struct {
	state State
	why   string
}{
	"python3__other__1":  {StateNeedsInput, "the REPL's '...' continuation waits for the user"},
	"python3__exited__1": {StateReady, "python exited and the shell prompt is back: the task's command line ended"},
}

// screenOnlyExpect lists screens whose label the screen alone cannot
// decide, the signal that does, and what the screen alone gives.
var screenOnlyExpect = map[string]struct {
	state  State
	signal string
}{
	"less__needs_input__1": {StateBusy, "#{alternate_on}=1: less's first page ends with the file name, which looks like command output"},
	"pi__exited__3":        {StateReady, "#{pane_dead}=1: pi exited without a word and tmux has not reaped it yet, so no 'Pane is dead' banner; its last frame is a ready one"},
}

// decidedExpect lists screens that runner reads, on purpose, other than
// the capture's label says, and why.
var decidedExpect = map[string]struct {
	state State
	why   string
}{
	"copilot__error__1": {StateLimited, "a 429 the CLI gave up on is a usage limit to runner (--on-limit decides), a refinement of the error the capture labels"},
	"copilot__other__1": {StateNeedsInput, "the quick-help overlay takes the next key: nothing may be pasted until a key closes it"},
}

func expected(f fixture) State {
	base := fixtureBase(f.file)
	if e, ok := decidedExpect[base]; ok {
		return e.state
	}
	if toolProfile[f.tool] == "shell" {
		if e, ok := shellExpect[base]; ok {
			return e.state
		}
	}
	if f.label == "other" {
		return StateUnknown
	}
	return State(f.label)
}

func fixtureBase(path string) string {
	b := filepath.Base(path)
	for _, ext := range []string{".J.txt", ".txt", ".ansi"} {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}

var indexMeta = regexp.MustCompile(`^- \*\*(\S+?)\.txt.*pane_current_command=([^,]+), alternate_on=(\d), pane_dead=(\d)(?: \(status (\d+)\))?.*cursor=\d+,(\d+)`)

// loadShared reads labels.tsv and the tmux metadata in INDEX.md, and
// returns every capture (.txt, .ansi, .J.txt) of every labelled screen.
func loadShared(t *testing.T) []fixture {
	t.Helper()
	if _, err := os.Stat(sharedScreens); err != nil {
		skipOrFailInCI(t, "real screen fixtures not found at %s (the shared directory beside the checkout): %v", sharedScreens, err)
	}
	meta := map[string]PaneInfo{}
	idx, err := os.ReadFile(filepath.Join(sharedScreens, "INDEX.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(idx), "\n") {
		m := indexMeta.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		st, _ := strconv.Atoi(m[5])
		y, _ := strconv.Atoi(m[6])
		meta[m[1]] = PaneInfo{CurrentCommand: m[2], AlternateOn: m[3] == "1", Dead: m[4] == "1", DeadStatus: st, CursorKnown: true, CursorY: y}
	}
	fh, err := os.Open(filepath.Join(sharedScreens, "labels.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []fixture
	labelled := map[string]bool{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 || cols[0] == "file" {
			continue
		}
		base := strings.TrimSuffix(cols[0], ".txt")
		labelled[base] = true
		info, ok := meta[base]
		if !ok {
			t.Errorf("%s: no tmux metadata line in INDEX.md", base)
		}
		for _, ext := range []string{".txt", ".ansi", ".J.txt"} {
			p := filepath.Join(sharedScreens, base+ext)
			if _, err := os.Stat(p); err == nil {
				out = append(out, fixture{file: p, tool: cols[1], label: cols[2], info: info, hasInfo: ok})
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Every screen in the directory must be labelled, so none is skipped.
	files, _ := filepath.Glob(filepath.Join(sharedScreens, "*.txt"))
	for _, f := range files {
		if !labelled[fixtureBase(f)] {
			t.Errorf("%s: screen without a label in labels.tsv", f)
		}
	}
	return out
}

// loadSim returns the sim screens written from the sim's screen contract;
// the label is in the file name.
func loadSim(t *testing.T) []fixture {
	t.Helper()
	files, err := filepath.Glob("testdata/screens/sim__*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sim fixtures in testdata/screens: %v", err)
	}
	var out []fixture
	for _, f := range files {
		parts := strings.Split(fixtureBase(f), "__")
		out = append(out, fixture{file: f, tool: "sim", label: parts[1]})
	}
	return out
}

// TestDetectFixtures classifies every real screen and every sim screen with
// its tool's profile: with the pane metadata tmux gave at capture time
// (what dispatch has), and from the screen alone (what `runner agents
// detect --file` has).
func TestDetectFixtures(t *testing.T) {
	profiles := Builtins()
	fixtures := append(loadShared(t), loadSim(t)...)
	perProfile := map[string]int{}
	for _, f := range fixtures {
		name := toolProfile[f.tool]
		if name == "" {
			t.Errorf("%s: no profile for tool %q", f.file, f.tool)
			continue
		}
		p, err := FindProfile(profiles, name)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		want := expected(f)
		t.Run(filepath.Base(f.file), func(t *testing.T) {
			got := DetectPane(p, string(raw), f.info)
			if got.State != want {
				t.Errorf("profile %s, label %s: with pane info %+v got %s (field %s, pattern %q, line %d %q), want %s",
					name, f.label, f.info, got.State, got.Field, got.Pattern, got.LineNo, got.Line, want)
			}
			wantScreen := want
			if e, ok := screenOnlyExpect[fixtureBase(f.file)]; ok {
				wantScreen = e.state
			}
			gotScreen := Detect(p, string(raw))
			if gotScreen.State != wantScreen {
				t.Errorf("profile %s, label %s: from the screen alone got %s (field %s, pattern %q, line %d %q), want %s",
					name, f.label, gotScreen.State, gotScreen.Field, gotScreen.Pattern, gotScreen.LineNo, gotScreen.Line, wantScreen)
			}
			if want == StateNeedsInput && gotScreen.State == StateNeedsInput && gotScreen.Field != "pane_alternate_on" && gotScreen.Question == "" {
				t.Errorf("needs_input without a question")
			}
		})
		perProfile[name]++
	}
	for name, n := range perProfile {
		t.Logf("profile %-8s %3d captures", name, n)
	}
}

// skipOrFailInCI skips a test whose fixtures are missing, except in CI
// (CI set, as .ci/run does), where a missing fixture fails the test: CI
// must not lose the real-screen tests silently.
func skipOrFailInCI(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format+" (CI is set: these tests must run in CI)", args...)
	}
	t.Skipf(format, args...)
}

func readFixture(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) && strings.HasPrefix(path, sharedScreens) {
		skipOrFailInCI(t, "real screen fixtures not found at %s", sharedScreens)
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDetectQuestionAndTrust(t *testing.T) {
	for _, tc := range []struct {
		profile, file string
		contains      []string
		trustKeys     string
	}{
		{"claude", sharedScreens + "/claude__needs_input__3.txt", []string{"Bash command", "touch hello.txt", "Do you want to proceed?", "3. No"}, ""},
		{"claude", sharedScreens + "/claude__needs_input__1.txt", []string{"Quick safety check", "Yes, I trust this folder"}, "Enter"},
		{"codex", sharedScreens + "/codex__needs_input__7.txt", []string{"Would you like to run the following command?", "$ touch other.txt", "Press enter to confirm"}, ""},
		{"gemini", sharedScreens + "/gemini__needs_input__5.txt", []string{"Shell  touch hello.txt", "Allow execution of [Shell]?", "1. Allow once"}, ""},
		{"gemini", sharedScreens + "/gemini__needs_input__1.txt", []string{"Do you trust the files in this folder?", "1. Trust folder"}, "Enter"},
		{"opencode", sharedScreens + "/opencode__needs_input__3.txt", []string{"Permission required", "$ touch other.txt", "Allow once"}, ""},
		{"sim", "testdata/screens/sim__needs_input__1.txt", []string{"Create hello.txt?\n❯ 1. Yes\n2. No"}, ""},
		{"sim", "testdata/screens/sim__needs_input__3.txt", []string{"Do you trust the files in this folder?"}, "1"},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			p, err := BuiltinProfile(tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			d := Detect(p, readFixture(t, tc.file))
			if d.State != StateNeedsInput {
				t.Fatalf("state %s, want needs_input", d.State)
			}
			for _, s := range tc.contains {
				if !strings.Contains(d.Question, s) {
					t.Errorf("question %q does not contain %q", d.Question, s)
				}
			}
			if got := strings.Join(d.TrustKeys, " "); got != tc.trustKeys {
				t.Errorf("trust keys %q, want %q", got, tc.trustKeys)
			}
			if strings.Contains(d.Question, "> ask") {
				t.Errorf("question %q includes the echoed prompt", d.Question)
			}
		})
	}
}

// copilotRule is a rule of Copilot CLI's composer box.
const copilotRule = "────────────────────────────────────────\n"

// copilotLoading is Copilot CLI 1.0.102's screen while it loads its plugins
// and hooks, above (echoed) the prompt it took meanwhile: the bottom of
// TestRealAgentsAnswerToolText/copilot's screen on 2026-12-03.
func copilotLoading(echoed string) string {
	return echoed + " /tmp/realagent1453501612 [⎇ master]\n" + copilotRule + "❯\n" + copilotRule +
		" ● Loading: 1 plugin, 1 hook                         mock-model\n"
}

func TestDetectSignals(t *testing.T) {
	claude, _ := BuiltinProfile("claude")
	shell, _ := BuiltinProfile("shell")
	codex, _ := BuiltinProfile("codex")
	qwen, _ := BuiltinProfile("qwen")
	copilot, _ := BuiltinProfile("copilot")
	// The composer once start-up is over (a bare "? for shortcuts" footer
	// is the splash before it: codex__starting__3).
	const composer = "› Ask Codex to do anything\n\n  mock-model default · /p\n  ← for agents · ? for shortcuts\n"
	for _, tc := range []struct {
		name       string
		p          *Profile
		screen     string
		info       PaneInfo
		state      State
		field      string
		exitStatus int // -1: none
	}{
		{"dead pane beats a ready screen", claude, "❯\u00a0\n  ? for shortcuts\n", PaneInfo{Dead: true, DeadStatus: 3}, StateExited, "pane_dead", 3},
		{"dead banner gives the status", claude, "bye\n\nPane is dead (status 7, Sun Nov 22 08:16:16 2026)\n", PaneInfo{}, StateExited, "dead_banner", 7},
		{"needs input beats busy", claude, " Do you want to proceed?\n ❯ 1. Yes\n  esc to interrupt\n", PaneInfo{}, StateNeedsInput, "needs_input", -1},
		{"busy beats ready", claude, "❯\u00a0\n  esc to interrupt · ← for agents\n", PaneInfo{}, StateBusy, "busy", -1},
		{"an echoed prompt is not the input box", claude, "❯ hello\n\nsome answer\nmore\nlines\n", PaneInfo{}, StateUnknown, "none", -1},
		{"old spinner above the bottom is stale", claude, "✶ Newspapering…\n" + strings.Repeat("text\n", 15) + "❯\u00a0\n", PaneInfo{}, StateReady, "ready", -1},
		{"error after the last prompt", claude, "❯ hi\n\n● API Error: boom\n\n❯\u00a0\n  ? for shortcuts\n", PaneInfo{}, StateError, "error", -1},
		{"a new prompt resets an old error", claude, "● API Error: boom\n❯ hi\n● fine\n❯\u00a0\n", PaneInfo{}, StateReady, "ready", -1},
		{"escape sequences are ignored", claude, "\x1b[39m❯\u00a0\x1b[7m \x1b[0m\n\x1b[2m  ? for shortcuts\x1b[0m\n", PaneInfo{}, StateReady, "ready", -1},
		{"shell prompt gives the exit status", shell, "runner[0]:~$ false\nrunner[1]:~$\n", PaneInfo{CurrentCommand: "bash"}, StateReady, "ready", 1},
		{"shell: a foreground command is busy", shell, "runner[0]:~$ make\ncc -o x x.c\n", PaneInfo{CurrentCommand: "make"}, StateBusy, "pane_current_command", -1},
		{"shell: output without a prompt is busy", shell, "runner[0]:~$ make\ncc -o x x.c\n", PaneInfo{}, StateBusy, "busy", -1},
		{"shell: a question with the cursor after it", shell, "runner[0]:~$ ./x\nProceed?\n", PaneInfo{CurrentCommand: "x", CursorKnown: true, CursorY: 1}, StateNeedsInput, "needs_input", -1},
		{"shell: output ending in a colon, cursor below", shell, "runner[0]:~$ make\nCompiling:\n", PaneInfo{CurrentCommand: "make", CursorKnown: true, CursorY: 2}, StateBusy, "pane_current_command", -1},
		{"shell: a pager waits", shell, "line 1\nline 2\nfile.txt\n", PaneInfo{CurrentCommand: "less", AlternateOn: true}, StateNeedsInput, "pane_alternate_on", -1},
		{"blank is starting", claude, "\n\n\n", PaneInfo{}, StateStarting, "blank", -1},
		{"codex: first composer, no turn yet", codex, ">_ OpenAI Codex\n\n" + composer, PaneInfo{}, StateReady, "ready", -1},
		{"codex: answer streaming under an echoed prompt", codex, "› fix it\n\n• This is\n\n" + composer, PaneInfo{}, StateBusy, "turn_open", -1},
		{"codex: the echoed prompt scrolled above the bottom", codex, "› fix it\n" + strings.Repeat("• words\n", 20) + composer, PaneInfo{}, StateBusy, "turn_open", -1},
		{"codex: Worked for closes the turn", codex, "› fix it\n• Done.\n  Worked for 1m 02s • 20:52\n\n" + composer, PaneInfo{}, StateReady, "ready", -1},
		{"codex: a turn under a second closes too", codex, "› fix it\n• REAL-MESSAGE-DONE\n  Worked for <1s • 00:26\n\n" + composer, PaneInfo{}, StateReady, "ready", -1},
		{"codex: an interrupted turn is closed", codex, "› fix it\n■ Conversation interrupted - tell the model what to do\n\n" + composer, PaneInfo{}, StateReady, "ready", -1},
		{"codex: a new prompt reopens", codex, "› a\n  Worked for 3s • 20:52\n› b\n\n" + composer, PaneInfo{}, StateBusy, "turn_open", -1},
		{"codex: a slash popup is not a prompt", codex, "› /quit  exit Codex\n\n› /quit\n\n  GPT-6.1-Sol default · /p\n", PaneInfo{}, StateReady, "ready", -1},
		{"codex: the splash before start-up ends is starting", codex, ">_ OpenAI Codex\n     loading\n\n› Ask Codex to do anything\n\n  ? for shortcuts\n", PaneInfo{}, StateStarting, "starting", -1},
		{"codex: a prompt queued during start-up is starting, not busy", codex, "› Say hello.\n  Waiting for startup  · esc cancel\n", PaneInfo{}, StateStarting, "starting", -1},
		{"codex: the trust dialog beats the start-up footer", codex, "  Trust this folder? Codex can read\n› 1. Trust and continue\n  ? for shortcuts\n", PaneInfo{}, StateNeedsInput, "trust", -1},
		{"qwen: initialising under the input box is starting", qwen, ">   Type your message or @path/to/file\n──────\n  ⠋ Initializing...\n", PaneInfo{}, StateStarting, "starting", -1},
		{"qwen: initialising with a dots spinner is starting", qwen, ">   Type your message or @path/to/file\n──────\n  .   Initializing...\n", PaneInfo{}, StateStarting, "starting", -1},
		{"qwen: a prompt typed while initialising is starting", qwen, "> Say hello.\n──────\n  ⠙ Initializing...\n", PaneInfo{}, StateStarting, "starting", -1},
		{"copilot: loading its plugins and hooks is starting", copilot, copilotLoading(""), PaneInfo{}, StateStarting, "starting", -1},
		{"copilot: a prompt taken while it loads is starting, not its turn's end", copilot, copilotLoading(" ❯ please do the ANSWER-TOOL now                     01:44\n"), PaneInfo{}, StateStarting, "starting", -1},
		{"copilot: loaded, the composer is ready", copilot, " /tmp/p [⎇ master]\n" + copilotRule + "❯\n" + copilotRule + " ← open sidebar · ctrl+o tools                  mock-model\n", PaneInfo{}, StateReady, "ready", -1},
		{"qwen: initialised, the spinner is busy again", qwen, "> \n──────\n  ⠙ Thinking... (1s · esc to cancel)\n", PaneInfo{}, StateBusy, "busy", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := DetectPane(tc.p, tc.screen, tc.info)
			if d.State != tc.state || d.Field != tc.field {
				t.Fatalf("got %s by %s (%q on %q), want %s by %s", d.State, d.Field, d.Pattern, d.Line, tc.state, tc.field)
			}
			switch {
			case tc.exitStatus < 0 && d.ExitStatus != nil:
				t.Errorf("exit status %d, want none", *d.ExitStatus)
			case tc.exitStatus >= 0 && (d.ExitStatus == nil || *d.ExitStatus != tc.exitStatus):
				t.Errorf("exit status %v, want %d", d.ExitStatus, tc.exitStatus)
			}
		})
	}
}

func TestMaskVolatile(t *testing.T) {
	claude, _ := BuiltinProfile("claude")
	frame := func(spinner, tail string) string {
		return "● I'll create the file.\n\n" + spinner + "\n" + "────\n❯\u00a0" + tail + "\n  esc to interrupt\n"
	}
	a := MaskVolatile(claude, frame("✶ Newspapering… (3s · ↑ 5 tokens)", ""))
	b := MaskVolatile(claude, frame("\x1b[38;5;174m✻\x1b[0m Newspapering… (4s · ↑ 9 tokens)", ""))
	if a != b {
		t.Errorf("spinner frames mask differently:\n%q\n%q", a, b)
	}
	if c := MaskVolatile(claude, frame("✶ Newspapering… (3s · ↑ 5 tokens)", "typed")); c == a {
		t.Errorf("a change in the input box was masked")
	}
	if strings.Contains(a, "\x1b") {
		t.Errorf("escape sequences kept: %q", a)
	}
}

func TestDetectUncompiledProfile(t *testing.T) {
	p := &Profile{Name: "x", Command: []string{"x"}, Ready: []string{`^ready>`}}
	if d := Detect(p, "ready>\n"); d.State != StateReady {
		t.Errorf("got %s, want ready", d.State)
	}
	bad := &Profile{Name: "x", Command: []string{"x"}, Ready: []string{`(`}}
	if d := Detect(bad, "x\n"); d.State != StateUnknown || !strings.Contains(d.Pattern, "invalid profile") {
		t.Errorf("got %+v, want unknown with the profile error", d)
	}
}

// TestAutoModeScreens: the real screens of each CLI in its auto mode
// (testdata/screens-auto) are read as their names say; an unsent prompt
// is the ready line, so delivery sees it still in the composer.
func TestAutoModeScreens(t *testing.T) {
	files, err := filepath.Glob("testdata/screens-auto/*__*__*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no screens: %v", err)
	}
	for _, f := range files {
		parts := strings.Split(strings.TrimSuffix(filepath.Base(f), ".txt"), "__")
		p, err := BuiltinProfile(parts[0])
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := Detect(p, string(b))
		if string(d.State) != parts[1] {
			t.Errorf("%s: %s (line %q), want %s", f, d.State, d.Line, parts[1])
		}
		if strings.HasSuffix(parts[2], "unsent") && !strings.Contains(d.Line, "please do the AUTO-EDIT now") {
			t.Errorf("%s: ready line %q does not show the unsent prompt", f, d.Line)
		}
	}
}

// TestMenuMove: on real dialogs, the moves from the selected option to the
// one each profile chooses by its label (0: Enter as it stands).
func TestMenuMove(t *testing.T) {
	for _, tc := range []struct {
		file, cli, label string
		moves            int
	}{
		{"screens-real/claude__needs_input__2.txt", "claude", "trust", 0},
		{"screens-newest/claude-2.1.332__needs_input__trust-cursor-on-no.txt", "claude", "trust", 1},
		{"screens-newest/claude-2.1.332__needs_input__trust-cursor-on-yes.txt", "claude", "trust", 0},
		{"screens-real/claude__needs_input__3.txt", "claude", "apikey", -1},
		{"screens-real/claude__needs_input__1.txt", "claude", "approve", 0},
		{"screens-real/codex__needs_input__2.txt", "codex", "trust", 0},
		{"screens-real/codex__needs_input__1.txt", "codex", "approve", 0},
		{"screens-real/gemini__needs_input__1.txt", "gemini", "trust", 0},
		{"screens-real/gemini__needs_input__2.txt", "gemini", "approve", 0},
	} {
		p, err := BuiltinProfile(tc.cli)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		label := p.ApproveChoose
		switch tc.label {
		case "trust":
			label = p.Trust[0].Choose
		case "apikey":
			label = p.Trust[1].Choose
		}
		if tc.label != "approve" {
			if d := Detect(p, string(b)); d.TrustChoose != label {
				t.Errorf("%s: detection chooses %q, want %q", tc.file, d.TrustChoose, label)
			}
		}
		moves, ok := MenuMove(p, string(b), label)
		if !ok || moves != tc.moves {
			t.Errorf("%s: MenuMove(%s) = %d, %v; want %d, true", tc.file, tc.label, moves, ok, tc.moves)
		}
	}
	// No cursor on the screen, no label: nothing to choose.
	p, _ := BuiltinProfile("claude")
	if _, ok := MenuMove(p, "just text\n", p.Trust[0].Choose); ok {
		t.Error("MenuMove found a menu on a screen without one")
	}
}
