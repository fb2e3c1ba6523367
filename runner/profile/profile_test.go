package profile

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/fault"
)

func TestBuiltins(t *testing.T) {
	ps := Builtins()
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.Name] {
			t.Errorf("duplicate profile %s", p.Name)
		}
		seen[p.Name] = true
		if len(p.Ready) == 0 || len(p.Busy) == 0 && p.Name != "shell" {
			t.Errorf("%s: no ready or busy patterns", p.Name)
		}
		if len(p.InterruptKeys) == 0 {
			t.Errorf("%s: no interrupt keys", p.Name)
		}
		if len(p.PermissionsAutoArgs) > 0 && p.PermissionsAutoDoc == "" {
			t.Errorf("%s: auto-approval flag without a doc of what it allows", p.Name)
		}
		if p.EnterDelay.Duration <= 0 {
			t.Errorf("%s: no enter delay", p.Name)
		}
	}
	for _, n := range []string{"claude", "codex", "gemini", "opencode", "aider", "shell", "sim"} {
		if !seen[n] {
			t.Errorf("built-in %s missing", n)
		}
	}
	codex, _ := BuiltinProfile("codex")
	if codex.EnterDelay.Duration < 150*time.Millisecond {
		t.Errorf("codex enter delay %v: Codex reads Enter within 120 ms of a paste as a newline", codex.EnterDelay)
	}
	// Fresh copies: changing one does not change the next.
	a, _ := BuiltinProfile("claude")
	a.Ready[0] = "changed"
	b, _ := BuiltinProfile("claude")
	if b.Ready[0] == "changed" {
		t.Error("Builtins shares state between calls")
	}
}

func TestArgv(t *testing.T) {
	claude, _ := BuiltinProfile("claude")
	got, err := claude.Argv(LaunchOptions{Model: "claude-sonnet-4-5", Permissions: PermissionsAuto, ExtraArgs: []string{"--verbose", "; rm -rf /"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"claude", "--model", "claude-sonnet-4-5", "--permission-mode", "acceptEdits", "--allowedTools", "Bash,WebFetch,WebSearch", "--verbose", "; rm -rf /"}
	if !slices.Equal(got, want) {
		t.Errorf("argv %q, want %q", got, want)
	}
	sim, _ := BuiltinProfile("sim")
	if _, err := sim.Argv(LaunchOptions{Model: "x"}); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("model on a profile without a model flag: %v, want a usage error", err)
	}
	if _, err := sim.Argv(LaunchOptions{Permissions: PermissionsAuto}); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("auto permissions on a profile without the flag: %v, want a usage error", err)
	}
	got, _ = sim.Argv(LaunchOptions{})
	if !slices.Equal(got, sim.Command) {
		t.Errorf("plain argv %q", got)
	}
	got[0] = "mutated"
	if sim.Command[0] == "mutated" {
		t.Error("Argv aliases the profile's Command")
	}
}

func TestMergeProfile(t *testing.T) {
	base, _ := BuiltinProfile("claude")
	orig, _ := json.Marshal(base)
	p, err := MergeProfile("claude", base, []byte(`{"enter_delay":"300ms","ready":["^READY$"],"paste_raw":true,"trust":[{"pattern":"trust me","keys":["y"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.EnterDelay.Duration != 300*time.Millisecond || !p.PasteRaw || !slices.Equal(p.Ready, []string{"^READY$"}) {
		t.Errorf("overrides not applied: %+v", p)
	}
	if !slices.Equal(p.Busy, base.Busy) || p.Hook == nil || p.ModelFlag != "--model" {
		t.Errorf("keys absent from the override changed")
	}
	if d := Detect(p, "READY\n"); d.State != StateReady {
		t.Errorf("merged profile not compiled with the new pattern: %+v", d)
	}
	if d := Detect(p, "trust me\n"); d.State != StateNeedsInput || !slices.Equal(d.TrustKeys, []string{"y"}) || d.TrustChoose != "" {
		t.Errorf("merged trust dialog: %+v (a list is replaced whole: nothing of the old first entry, its choose, stays)", d)
	}
	if now, _ := json.Marshal(base); string(now) != string(orig) {
		t.Error("MergeProfile modified its base")
	}
	// A number is milliseconds.
	if p, err := MergeProfile("claude", base, []byte(`{"enter_delay":40}`)); err != nil || p.EnterDelay.Duration != 40*time.Millisecond {
		t.Errorf("enter_delay 40: %v, %v", p, err)
	}
	// A new profile from nothing.
	n, err := MergeProfile("mycli", nil, []byte(`{"command":["mycli","--tui"],"ready":["^> $"],"busy":["working"]}`))
	if err != nil || n.Name != "mycli" || n.EnterDelay.Duration != DefaultEnterDelay || n.BottomLines != DefaultBottomLines {
		t.Errorf("new profile: %+v, %v", n, err)
	}
}

func TestMergeProfileErrors(t *testing.T) {
	base, _ := BuiltinProfile("codex")
	for _, tc := range []struct {
		partial string
		want    []string
	}{
		{`{"busy":["(unclosed"]}`, []string{`profile "codex"`, `key "busy[0]"`, "bad regular expression"}},
		{`{"trust":[{"pattern":"ok","keys":[]}]}`, []string{`profile "codex"`, `"trust[0].keys"`}},
		{`{"ready":[""]}`, []string{`key "ready[0]"`, "empty pattern"}},
		{`{"enter_dela":"1s"}`, []string{`profile "codex"`, `unknown key "enter_dela"`, "enter_delay"}},
		{`{"enter_delay":"soon"}`, []string{`key "enter_delay"`, `bad duration "soon"`}},
		{`{"enter_delay":"-5ms"}`, []string{`key "enter_delay"`, "negative"}},
		{`{"command":[]}`, []string{`key "command"`, "empty launch argv"}},
		{`{"hook":{"kind":"magic"}}`, []string{`"hook.kind"`, `"magic"`}},
		{`{"bottom_lines":"many"}`, []string{`key "bottom_lines"`}},
		{`[1,2]`, []string{`profile "codex"`, "not a JSON object"}},
	} {
		t.Run(tc.partial, func(t *testing.T) {
			_, err := MergeProfile("codex", base, []byte(tc.partial))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestHookRender(t *testing.T) {
	claude, _ := BuiltinProfile("claude")
	cmdline := `/opt/my runner/runner hook "t-1"`
	paths := HookPaths{Command: cmdline, Events: "/state/ev'ents/t-1.jsonl", Dir: "/state/hooks/t-1"}
	got, err := claude.Hook.Render(paths)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Args, []string{"--settings", "/state/hooks/t-1/claude-settings.json"}) || got.SettingsPath != "/state/hooks/t-1/claude-settings.json" {
		t.Errorf("args %q, path %q", got.Args, got.SettingsPath)
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	if err := json.Unmarshal(got.Settings, &settings); err != nil {
		t.Fatalf("settings not JSON: %v\n%s", err, got.Settings)
	}
	want := `{ cat; echo; } >> '/state/ev'\''ents/t-1.jsonl'`
	if h := settings.Hooks["Stop"]; len(h) != 1 || h[0].Hooks[0].Type != "command" || h[0].Hooks[0].Command != want {
		t.Errorf("Stop hook %+v, want the appender %s", h, want)
	}
	if h := settings.Hooks["UserPromptSubmit"]; len(h) != 1 || h[0].Hooks[0].Command != want {
		t.Errorf("UserPromptSubmit hook %+v, want the appender %s (it names the transcript as a turn begins)", h, want)
	}
	if h := settings.Hooks["PostToolUse"]; len(h) != 1 || h[0].Hooks[0].Command != cmdline+" --context PostToolUse" {
		t.Errorf("PostToolUse hook %+v, want runner's hook giving notices (%s --context PostToolUse)", h, cmdline)
	}
	if h := settings.Hooks["PostToolUseFailure"]; len(h) != 1 || h[0].Hooks[0].Command != cmdline+" --context PostToolUseFailure" {
		t.Errorf("PostToolUseFailure hook %+v, want runner's hook giving notices after a failed tool too (%s --context PostToolUseFailure)", h, cmdline)
	}
	if len(settings.Hooks) != 4 {
		t.Errorf("hooks on %d events, want Stop, UserPromptSubmit, PostToolUse and PostToolUseFailure only (SubagentStop is a sub-agent's)", len(settings.Hooks))
	}
	sim, _ := BuiltinProfile("sim")
	got, err = sim.Hook.Render(paths)
	if err != nil || !slices.Equal(got.Args, []string{"--hook", cmdline, "--context-hook", cmdline + " --context PostToolUse"}) || got.Settings != nil {
		t.Errorf("sim hook: %+v, %v", got, err)
	}
	if _, err := claude.Hook.Render(HookPaths{Command: cmdline, Events: "/e"}); err == nil {
		t.Error("settings-file hook without a directory: no error")
	}
	if _, err := (&Hook{Kind: HookKindSettingsFile, Settings: `{"x":{command}`}).Render(paths); err == nil {
		t.Error("invalid settings template: no error")
	}
	if _, err := (&Hook{Kind: HookKindSettingsFile, File: "../x.json", Settings: `{}`}).Render(paths); err == nil {
		t.Error("a file outside the hook directory: no error")
	}
	// Gemini and Qwen find their file through a variable.
	for name, wantEnv := range map[string]string{
		"gemini": "GEMINI_CLI_SYSTEM_DEFAULTS_PATH=/state/hooks/t-1/gemini-system-defaults.json",
		"qwen":   "QWEN_CODE_SYSTEM_DEFAULTS_PATH=/state/hooks/t-1/qwen-system-defaults.json",
	} {
		p, _ := BuiltinProfile(name)
		got, err := p.Hook.Render(paths)
		if err != nil || !slices.Equal(got.Env, []string{wantEnv}) || len(got.Args) != 0 {
			t.Errorf("%s hook: env %q args %q, %v; want env %s", name, got.Env, got.Args, err, wantEnv)
		}
		if !strings.Contains(string(got.Settings), "t-1.jsonl") {
			t.Errorf("%s hook settings do not name the events file:\n%s", name, got.Settings)
		}
	}
}

// TestCodexNotifyHook runs the codex profile's notify program the way
// Codex does (the event JSON as the last argument): a turn's event is
// appended to the events file as one line, the hidden title-generation
// turn's is not, and text in the payload is never run.
func TestCodexNotifyHook(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	codex, _ := BuiltinProfile("codex")
	out := filepath.Join(t.TempDir(), "o\"ut 'file")
	hl, err := codex.Hook.Render(HookPaths{Command: "/unused", Events: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(hl.Args) != 2 || hl.Args[0] != "-c" || !strings.HasPrefix(hl.Args[1], "notify=") {
		t.Fatalf("args %q, want -c notify=[...]", hl.Args)
	}
	var argv []string // a TOML array of basic strings is also JSON here
	if err := json.Unmarshal([]byte(strings.TrimPrefix(hl.Args[1], "notify=")), &argv); err != nil {
		t.Fatalf("notify value %s: %v", hl.Args[1], err)
	}
	turn := `{"type":"agent-turn-complete","thread-id":"a","input-messages":["fix the bug"],"last-assistant-message":"done"}`
	title := `{"type":"agent-turn-complete","thread-id":"b","input-messages":["Generate a concise, single-line task title of at most 36 characters"],"last-assistant-message":"Fix bug"}`
	// The payload carries the user's prompt: it must reach the file as
	// data, never be run by the sh -c wrapper.
	cwd := t.TempDir()
	hostile := `{"type":"agent-turn-complete","input-messages":["$(touch PWNED1) ` + "`touch PWNED2`" + ` '; touch PWNED3; ' \"; touch PWNED4; \""]}`
	for _, ev := range []string{title, turn, hostile} {
		cmd := exec.Command(argv[0], append(argv[1:], ev)...)
		cmd.Dir = cwd
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("notify program %q: %v\n%s", argv, err, b)
		}
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := turn + "\n" + hostile + "\n"; string(got) != want {
		t.Errorf("events file %q, want %q", got, want)
	}
	if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
		t.Errorf("the notify wrapper ran text from the payload: %v", ents)
	}
	ev, ok := ParseHookEvent(turn)
	if !ok || !ev.Stop || ev.Answer != "done" || ev.Session != "a" {
		t.Errorf("codex payload read as %+v", ev)
	}
}

// TestCodexNotifyChain: a user's own notify program (from their Codex
// config.toml) still runs after runner's, as Codex would have run it — its
// words as argv, the event JSON last — for every event, the title turn's
// too; words with quotes, spaces and $ reach it verbatim.
func TestCodexNotifyChain(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	logf := filepath.Join(dir, "user notify.log")
	script := filepath.Join(dir, "user-notify.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nfor a; do printf '<%s>' \"$a\"; done >> \"$1\"; echo >> \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.toml")
	toml := "model = \"x\"\nnotify = [\n  \"" + script + "\", # the program\n  '" + logf + "',\n  \"a \\\"b\\\" $HOME\",\n]\n[tui]\nnotify = [\"ignored\"]\n"
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	chain, err := CodexNotify(cfg, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{script, logf, `a "b" $HOME`}; !slices.Equal(chain, want) {
		t.Fatalf("CodexNotify = %q, want %q", chain, want)
	}
	codex, _ := BuiltinProfile("codex")
	events := filepath.Join(dir, "events.jsonl")
	hl, err := codex.Hook.Render(HookPaths{Command: "/unused", Events: events, Chain: chain})
	if err != nil {
		t.Fatal(err)
	}
	var argv []string
	if err := json.Unmarshal([]byte(strings.TrimPrefix(hl.Args[1], "notify=")), &argv); err != nil {
		t.Fatalf("notify value %s: %v", hl.Args[1], err)
	}
	turn := `{"type":"agent-turn-complete","thread-id":"a","input-messages":["fix $(x)"],"last-assistant-message":"done"}`
	title := `{"type":"agent-turn-complete","thread-id":"b","input-messages":["Generate a concise, single-line task title of at most 36 characters"]}`
	for _, ev := range []string{turn, title} {
		cmd := exec.Command(argv[0], append(argv[1:], ev)...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("notify program: %v\n%s", err, b)
		}
	}
	if got, _ := os.ReadFile(events); string(got) != turn+"\n" {
		t.Errorf("events file %q, want the turn's event only", got)
	}
	got, _ := os.ReadFile(logf)
	want := "<" + logf + `><a "b" $HOME><` + turn + ">\n<" + logf + `><a "b" $HOME><` + title + ">\n"
	if string(got) != want {
		t.Errorf("the user's notify got\n%s\nwant\n%s", got, want)
	}

	// Bad input: a notify that is not an array of strings is an error
	// naming the file (runner would otherwise drop the user's program).
	for _, bad := range []string{"notify = \"notify-send\"\n", "notify = [\"a\", 3]\n", "notify = [\"a\",\n"} {
		if err := os.WriteFile(cfg, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := CodexNotify(cfg, os.ReadFile); err == nil || !strings.Contains(err.Error(), cfg) {
			t.Errorf("CodexNotify(%q) error %v, want one naming %s", bad, err, cfg)
		}
	}
	if c, err := CodexNotify(filepath.Join(dir, "none.toml"), os.ReadFile); c != nil || err != nil {
		t.Errorf("missing file: %q, %v", c, err)
	}
}

func shellQuoteTest(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestOpenCodeHook: runner's OpenCode plugin is written into the task's
// hook directory and named as a file:// URL in OPENCODE_CONFIG_CONTENT
// (a path with quotes and spaces stays valid JSON); a user's own
// OPENCODE_CONFIG_CONTENT keeps its keys and plugins, with runner's added
// after them; one that is not a JSON object is an error.
func TestOpenCodeHook(t *testing.T) {
	oc, _ := BuiltinProfile("opencode")
	if oc.Hook == nil {
		t.Fatal("opencode has no hook")
	}
	dir := `/state/hooks/t "1" x`
	hl, err := oc.Hook.Render(HookPaths{Command: "/unused", Events: "/e", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hl.Settings), "session.idle") || !strings.HasSuffix(hl.SettingsPath, ".js") {
		t.Fatalf("settings %s at %s, want the plugin", hl.Settings[:40], hl.SettingsPath)
	}
	if len(hl.Env) != 1 || !strings.HasPrefix(hl.Env[0], "OPENCODE_CONFIG_CONTENT=") {
		t.Fatalf("env %q", hl.Env)
	}
	var cfg struct{ Plugin []string }
	if err := json.Unmarshal([]byte(strings.TrimPrefix(hl.Env[0], "OPENCODE_CONFIG_CONTENT=")), &cfg); err != nil {
		t.Fatalf("%s: %v", hl.Env[0], err)
	}
	u, err := url.Parse(cfg.Plugin[0])
	if err != nil || u.Scheme != "file" || u.Path != hl.SettingsPath {
		t.Fatalf("plugin %q, want file://%s", cfg.Plugin, hl.SettingsPath)
	}

	user := `OPENCODE_CONFIG_CONTENT={"model":"a/b","plugin":["my-plugin"]}`
	got, err := MergeJSONEnv([]string{"HOME=/h", user}, hl.Env)
	if err != nil {
		t.Fatal(err)
	}
	var merged struct {
		Model  string
		Plugin []string
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(got[0], "OPENCODE_CONFIG_CONTENT=")), &merged); err != nil {
		t.Fatal(err)
	}
	if merged.Model != "a/b" || !slices.Equal(merged.Plugin, []string{"my-plugin", cfg.Plugin[0]}) {
		t.Errorf("merged %+v", merged)
	}
	if got, _ := MergeJSONEnv([]string{"HOME=/h"}, hl.Env); !slices.Equal(got, hl.Env) {
		t.Errorf("without a user value: %q", got)
	}
	if _, err := MergeJSONEnv([]string{"OPENCODE_CONFIG_CONTENT=[1]"}, hl.Env); err == nil || !strings.Contains(err.Error(), "OPENCODE_CONFIG_CONTENT") {
		t.Errorf("a user value that is no object: %v", err)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		cmp  int
		ok   bool
	}{
		{"2.1.332 (Claude Code)", "2.1.197", 1, true},
		{"codex-cli 0.169.0", "0.169.0", 0, true},
		{"0.61.0", "0.61.10", -1, true},
		{"1.18", "1.18.0", 0, true},
		{"unknown", "1.0", 0, false},
	} {
		if cmp, ok := CompareVersions(tc.a, tc.b); cmp != tc.cmp || ok != tc.ok {
			t.Errorf("CompareVersions(%q, %q) = %d, %v; want %d, %v", tc.a, tc.b, cmp, ok, tc.cmp, tc.ok)
		}
	}
}

// TestSessionIDNeedsADigit: an id has a digit; prose after the command
// ("codex resume and pick one") is no id.
func TestSessionIDNeedsADigit(t *testing.T) {
	p, _ := BuiltinProfile("codex")
	if id := p.FindSession("To continue, run codex resume and choose a session\n"); id != "" {
		t.Errorf("prose read as the id %q", id)
	}
	if id := p.FindSession("  codex resume 01a20507-a9e7-7502-a195-76826930e443\n"); id != "01a20507-a9e7-7502-a195-76826930e443" {
		t.Errorf("the id read as %q", id)
	}
}
