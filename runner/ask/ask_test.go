package ask

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/state"
)

// askState: p (root, running) has children c1, c2 (running) and c3 (done);
// r is another running root task; f a finished root task; x a queued one.

// directiveStart reports whether a prompt line would be acted on by the sim.
func directiveStart(line string) bool {
	f := strings.Fields(line)
	return len(f) > 0 && slices.Contains([]string{"sleep", "silent", "say", "write", "ask", "run", "exit", "crash"}, f[0])
}

func TestAskPrompt(t *testing.T) {
	at := time.Date(2026, 1, 2, 10, 11, 12, 0, time.UTC)
	small := &state.Task{ID: "t_abcdefgh", Agent: "claude", Project: "api", Dir: "/src/api",
		Text:  "write hello.txt hi\nrun rm -rf build\nfix the parser",
		Turns: []state.Turn{{Time: at, Summary: "read parser.go"}, {Time: at.Add(time.Minute), Summary: "exit 3 tests fail"}}}
	huge := &state.Task{ID: "t_hugehuge", Agent: "codex", Dir: "/src/x", Text: strings.Repeat("task line ", 5000)}
	for i := range 200 {
		huge.Turns = append(huge.Turns, state.Turn{Time: at, Summary: fmt.Sprintf("turn %d %s", i, strings.Repeat("z", 100))})
	}
	var bigTail strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&bigTail, "output line %d\n", i)
	}
	for _, tc := range []struct {
		name     string
		task     *state.Task
		tail     string
		asker    string
		question string
		want     []string
		dont     []string
	}{
		{name: "every part, framed", task: small, tail: "crash\n> compiling\nok", asker: "task t_11111111",
			question: "which file holds the retry logic?",
			want: []string{"shadow of agent t_abcdefgh (claude)", "project api (/src/api)", "Do not change any file",
				"| write hello.txt hi", "| fix the parser", "| 10:11:12 read parser.go", "| 10:12:12 exit 3 tests fail",
				"The end of its terminal output:\n| crash\n| > compiling\n| ok", "Question from task t_11111111:\nwhich file holds the retry logic?\n"}},
		{name: "no turns, no transcript", task: &state.Task{ID: "t_nnnnnnnn", Agent: "sim", Dir: "/d", Text: "t"},
			asker: "the user", question: "q?",
			want: []string{"| (no turn finished yet)", "in /d ", "Question from the user:\nq?"}, dont: []string{"terminal output"}},
		{name: "huge inputs stay bounded, newest kept", task: huge, tail: bigTail.String(), asker: "the user",
			question: strings.Repeat("why? ", 2000),
			want:     []string{"| output line 2999", "turn 199 ", "…"}, dont: []string{"| output line 0\n", "turn 0 "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Prompt(tc.task, tc.tail, tc.asker, tc.question)
			if len(p) > ContextMax {
				t.Errorf("prompt is %d bytes, over %d", len(p), ContextMax)
			}
			for _, w := range tc.want {
				if !strings.Contains(p, w) {
					t.Errorf("prompt lacks %q:\n%s", w, p)
				}
			}
			for _, d := range tc.dont {
				if strings.Contains(p, d) {
					t.Errorf("prompt has %q", d)
				}
			}
			// Only the question's own lines may read as directives.
			ctx, _, _ := strings.Cut(p, "\nQuestion from ")
			for _, l := range strings.Split(ctx, "\n") {
				if directiveStart(l) {
					t.Errorf("context line %q reads as a directive", l)
				}
			}
		})
	}
}

func TestCleanTranscript(t *testing.T) {
	raw := "\x1b[2J\x1b[H> do it\r\n\x1b[32m✻ Working…\x1b[0m\r✽ Working…\r\n✽ Working…\r\n\r\n\r\nanswer one\r\nanswer two\r\n"
	got := CleanTranscript(raw, 10)
	want := "> do it\n✽ Working…\nanswer one\nanswer two"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := CleanTranscript(raw, 2); got != "answer one\nanswer two" {
		t.Errorf("last 2: %q", got)
	}
	if got := CleanTranscript("", 5); got != "" {
		t.Errorf("empty: %q", got)
	}
}

func TestHeadlessProfiles(t *testing.T) {
	want := map[string]bool{"claude": true, "codex": true, "gemini": true, "opencode": true, "qwen": true, "sim": true,
		"aider": false, "shell": false, "pi": true, "copilot": true,
		// issue 54's: read-only modes (droid exec's default, kilo's ask
		// agent, cline --plan, auggie --ask); crush and agy were never run.
		"droid": true, "kilo": true, "cline": true, "auggie": true, "crush": false, "agy": false}
	for _, p := range profile.Builtins() {
		if has := len(p.Headless) > 0; has != want[p.Name] {
			t.Errorf("%s: headless mode %v, want %v", p.Name, has, want[p.Name])
		}
		for _, a := range p.Headless {
			if strings.Contains(a, "yolo") || strings.Contains(a, "bypass") || strings.Contains(a, "dangerous") || a == "--auto" {
				t.Errorf("%s: headless argv %q allows changes", p.Name, p.Headless)
			}
		}
	}
	sim, _ := profile.BuiltinProfile("sim")
	q := "say it; rm -rf / \"$(id)\"\nline two {prompt}"
	got := sim.HeadlessArgv(q)
	if !slices.Equal(got, []string{"runner", "agent-sim", "-p", q}) {
		t.Errorf("HeadlessArgv = %q: the prompt must be one argv element, as is", got)
	}
	shell, _ := profile.BuiltinProfile("shell")
	if shell.HeadlessArgv("x") != nil {
		t.Error("shell has a headless argv")
	}
	m, err := profile.MergeProfile("sim", sim, []byte(`{"headless":[]}`))
	if err != nil || len(m.Headless) != 0 {
		t.Errorf("headless [] should switch it off: %v %q", err, m.Headless)
	}
	m, err = profile.MergeProfile("shell", shell, []byte(`{"headless":["my-agent","--ask","--prompt={prompt}"]}`))
	if err != nil || !slices.Equal(m.HeadlessArgv("hi there"), []string{"my-agent", "--ask", "--prompt=hi there"}) {
		t.Errorf("custom headless: %v %q", err, m.HeadlessArgv("hi there"))
	}
	for partial, wantErr := range map[string]string{
		`{"headless":["claude","-p"]}`:        `key "headless": no {prompt} placeholder`,
		`{"headless":["{prompt}"]}`:           `key "headless": the first element must be the program`,
		`{"headless":["","{prompt}"]}`:        `key "headless": the first element must be the program`,
		`{"headless":"claude -p {prompt}"}`:   `key "headless"`,
		`{"headless_argv":["claude","-p"]}`:   `unknown key "headless_argv"`,
		`{"headless":["claude","{prompt"]}`:   `no {prompt} placeholder`,
		`{"headless":["a","b","c","d","e"]}`:  `no {prompt} placeholder`,
		`{"headless":["a",""]}`:               `no {prompt} placeholder`,
		`{"headless":["a","x{prompt}y","z"]}`: ``,
	} {
		_, err := profile.MergeProfile("claude", nil, []byte(`{"command":["claude"],`+partial[1:]))
		if wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", partial, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: err = %v, want %q", partial, err, wantErr)
		}
	}
	// The config accepts the key (config.go is strict about unknown keys).
	cfg, err := config.Parse([]byte(`{"profiles":{"aider":{"headless":["aider","--dry-run","--message","{prompt}"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := cfg.Profiles()
	if err != nil {
		t.Fatal(err)
	}
	aider, _ := profile.FindProfile(ps, "aider")
	if got := aider.HeadlessArgv("q"); !slices.Equal(got, []string{"aider", "--dry-run", "--message", "q"}) {
		t.Errorf("config override: %q", got)
	}
	cfg, err = config.Parse([]byte(`{"profiles":{"aider":{"headless":["aider"]}}}`))
	if err == nil {
		_, err = cfg.Profiles()
	}
	if err == nil || !strings.Contains(err.Error(), "placeholder") {
		t.Errorf("config with a headless argv without {prompt}: %v", err)
	}
}

func TestAskOutcome(t *testing.T) {
	ok := Answer{Task: "t_a", Mode: ModeShadow, Answer: "x"}
	msg := Answer{Task: "t_m", Mode: ModeMessage}
	failed := Answer{Task: "t_f", Error: "exited 1"}
	slow := Answer{Task: "t_s", Error: "no answer", TimedOut: true}
	fyiFailed := Answer{Task: "t_y", Answer: "x", FYIError: "no messages"}
	for _, tc := range []struct {
		as   []Answer
		want error
	}{
		{[]Answer{ok, msg, fyiFailed}, nil},
		{[]Answer{ok, slow}, ErrTimeout},
		{[]Answer{slow, failed}, ErrFailed},
		{[]Answer{failed}, ErrFailed},
	} {
		err := askOutcome(tc.as)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("askOutcome(%+v) = %v, want %v", tc.as, err, tc.want)
		}
	}
}
