package agentscmd

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/tmuxctl"
)

func TestDetect(t *testing.T) {
	screen, err := os.ReadFile(simAsk)
	if err != nil {
		t.Fatal(err)
	}
	x := newFake(t, string(screen), nil)
	if err := x.run(t, "detect", "--file", simAsk, "--agent", "sim"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"needs_input\n", `decided by: needs_input "^❯ 1\\. Yes"`, "question:", "    Create hello.txt?"} {
		if !strings.Contains(x.b.Out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, x.b.Out.String())
		}
	}
	if err := x.run(t, "detect", "--file", "-", "--agent", "sim", "--json"); err != nil {
		t.Fatal(err)
	}
	var got struct{ Agent, File, State, Field, Question string }
	if err := json.Unmarshal(x.b.Out.Bytes(), &got); err != nil || got.Agent != "sim" || got.File != "-" || got.State != "needs_input" ||
		got.Field != "needs_input" || !strings.Contains(got.Question, "Create hello.txt?") || !x.b.JSON {
		t.Errorf("detect --json of stdin: %v %+v", err, got)
	}
}

func TestDetectBadInput(t *testing.T) {
	x := newFake(t, "", nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"detect", "--agent", "sim"}, "give --pane ID"},
		{[]string{"detect", "--agent", "sim", "--file", simAsk, "--pane", "%1"}, "give --pane ID"},
		{[]string{"detect", "--file", simAsk}, "--agent is required"},
		{[]string{"detect", "--file", simAsk, "--agent", "nope"}, `unknown agent "nope"`},
		{[]string{"detect", "--file", "/nonexistent/screen.txt", "--agent", "sim"}, "agents detect: read screen /nonexistent/screen.txt"},
		{[]string{"detect", "--file", simAsk, "--agent", "shell", "--cursor-row", "-1"}, "cursor"},
	} {
		if err := x.run(t, tc.args...); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
		if x.b.Out.Len() != 0 {
			t.Errorf("%v wrote %q", tc.args, x.b.Out.String())
		}
	}
	var fe *cmdkit.FlagError
	if err := x.run(t, "detect", "extra"); !errors.As(err, &fe) {
		t.Errorf("detect extra: %v, want a FlagError", err)
	}
}

// TestDetectPaneFlags: the flags give what tmux would say of the pane,
// and decide what the text alone cannot.
func TestDetectPaneFlags(t *testing.T) {
	screen := filepath.Join(t.TempDir(), "pager.txt")
	if err := os.WriteFile(screen, []byte("line 1\nline 2\nnotes.txt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	x := newFake(t, "", nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "busy\n"},
		{[]string{"--alternate-on", "--current-command", "less"}, "needs_input\n"},
		{[]string{"--dead-status", "3"}, "exited\n"},
	} {
		if err := x.run(t, append([]string{"detect", "--file", screen, "--agent", "shell"}, tc.args...)...); err != nil || !strings.HasPrefix(x.b.Out.String(), tc.want) {
			t.Errorf("%v: %v %q, want %q first", tc.args, err, x.b.Out.String(), tc.want)
		}
	}
}

// TestDetectLivePane captures a real pane through TmuxFor, with what tmux
// says of it (its program, here dead).
func TestDetectLivePane(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	tc := tmuxServer(t)
	x := newFake(t, "", nil)
	x.f.TmuxFor = func(*config.Config) *tmuxctl.Client { return tc }
	pane, err := tc.Launch(t.Context(), tmuxctl.WindowSpec{Session: "d", Argv: []string{"sh", "-c", "echo hello; exit 3"}, RemainOnExit: true})
	if err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.After(10 * time.Second); ; {
		if err := x.run(t, "detect", "--pane", pane, "--agent", "shell", "--json"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(x.b.Out.String(), `"state": "exited"`) {
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the pane never read as exited: %s", x.b.Out.String())
		}
	}
	if !strings.Contains(x.b.Out.String(), `"file": "`+pane+`"`) || !strings.Contains(x.b.Out.String(), `"state": "exited"`) {
		t.Errorf("detect --pane of a dead pane: %s", x.b.Out.String())
	}
}

func TestList(t *testing.T) {
	x := newFake(t, "", nil)
	if err := x.run(t, "--json", "--no-version"); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Name      string
		Installed bool
	}
	if err := json.Unmarshal(x.b.Out.Bytes(), &got); err != nil || !x.b.JSON {
		t.Fatalf("not JSON: %v\n%s", err, x.b.Out.String())
	}
	names := map[string]bool{}
	for _, g := range got {
		names[g.Name] = true
	}
	for _, n := range []string{"claude", "codex", "shell", "sim"} {
		if !names[n] {
			t.Errorf("profile %s not listed", n)
		}
	}
	if err := x.run(t, "--no-version"); err != nil || !strings.HasPrefix(x.b.Out.String(), "AGENT") {
		t.Errorf("text listing: %v\n%s", err, x.b.Out.String())
	}
	bad := errors.New("config unreadable")
	x.f.Config = func() (*config.Config, error) { return nil, bad }
	if err := x.run(t, "--no-version"); !errors.Is(err, bad) {
		t.Errorf("a config that cannot be read: %v", err)
	}
}

func TestShow(t *testing.T) {
	x := newFake(t, "", map[string]string{"codex.toml": "enter_delay = '500ms'\n"})
	if err := x.run(t, "show", "codex"); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(x.b.Out.Bytes(), &got); err != nil || got["name"] != "codex" || got["enter_delay"] != "500ms" || !x.b.JSON {
		t.Errorf("show codex with an override: %v %v", err, got)
	}
	if err := x.run(t, "show", "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("show nope: %v", err)
	}
	if err := x.run(t, "show", "--toml", "codex"); err != nil || !strings.Contains(x.b.Out.String(), "verified_version = ") {
		t.Errorf("show --toml codex: %v\n%s", err, x.b.Out.String())
	}
	if err := x.run(t, "show", "--toml", "nope"); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), `no built-in agent "nope"`) {
		t.Errorf("show --toml nope: %v", err)
	}
	var fe *cmdkit.FlagError
	if err := x.run(t, "show"); !errors.As(err, &fe) {
		t.Errorf("show: %v, want a FlagError", err)
	}
}

// TestCheck: each file's verdict is printed; a bad one makes the command
// a silent usage error (the verdicts said it).
func TestCheck(t *testing.T) {
	x := newFake(t, "", map[string]string{
		"mycli.toml":  "command = ['mycli']\nready = ['^> $']\n",
		"claude.toml": "busy = ['Thinking']\n",
		"bad.toml":    "command = ['x']\n\nredy = ['^> ']\n",
	})
	good, bad := filepath.Join(x.agents, "mycli.toml"), filepath.Join(x.agents, "bad.toml")
	if err := x.run(t, "check", good, filepath.Join(x.agents, "claude.toml")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ok   " + good + ": defines the new agent mycli (command, ready)", "overrides the built-in agent claude (busy)"} {
		if !strings.Contains(x.b.Out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, x.b.Out.String())
		}
	}
	var se *cmdkit.SilentError
	err := x.run(t, "check", bad)
	if !errors.As(err, &se) || !errors.Is(err, fault.ErrUsage) || !strings.HasPrefix(x.b.Out.String(), "bad  "+bad+`:3: key "redy": unknown key`) {
		t.Errorf("bad file: %v %q", err, x.b.Out.String())
	}
	err = x.run(t, "check", "--json")
	var got []struct {
		Agent string
		OK    bool
	}
	if jerr := json.Unmarshal(x.b.Out.Bytes(), &got); jerr != nil || len(got) != 3 || !errors.As(err, &se) || !x.b.JSON {
		t.Errorf("check --json of the folder: %v %v %s", err, jerr, x.b.Out.String())
	}
	empty := newFake(t, "", nil)
	if err := empty.run(t, "check"); err != nil || !strings.HasPrefix(empty.b.Out.String(), "no agent files in ") {
		t.Errorf("no files: %v %q", err, empty.b.Out.String())
	}
	if err := empty.run(t, "check", "--json"); err != nil || strings.TrimSpace(empty.b.Out.String()) != "[]" {
		t.Errorf("no files, --json: %v %q", err, empty.b.Out.String())
	}
	delete(empty.env, "XDG_CONFIG_HOME")
	delete(empty.env, "HOME")
	if err := empty.run(t, "check"); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "no config directory") {
		t.Errorf("no config directory: %v", err)
	}
}
