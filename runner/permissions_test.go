package runner

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
)

// TestPermissionsMode: the flag's mode, else the config's, else ask; a
// CLI without an asking mode falls back to its own default unless the
// flag asks for ask (exit 2).
func TestPermissionsMode(t *testing.T) {
	claude, _ := profile.BuiltinProfile("claude")
	pi, _ := profile.BuiltinProfile("pi")
	for _, tc := range []struct {
		prof           *profile.Profile
		flag, config   string
		want, errWords string
	}{
		{prof: claude, want: "ask"},
		{prof: claude, config: "default", want: "default"},
		{prof: claude, config: "auto", want: "auto"},
		{prof: claude, flag: "default", config: "auto", want: "default"},
		{prof: claude, flag: "ask", config: "default", want: "ask"},
		{prof: pi, want: "default"},
		{prof: pi, config: "ask", want: "default"},
		{prof: pi, flag: "auto", want: "auto"},
		{prof: pi, flag: "ask", errWords: "agent pi has no asking mode"},
		{prof: claude, flag: "bogus", errWords: `--permissions must be ask, auto or default, not "bogus"`},
	} {
		got, err := permissionsMode(tc.prof, tc.flag, tc.config)
		if tc.errWords != "" {
			if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tc.errWords) {
				t.Errorf("%s flag %q config %q: %q, %v; want a usage error %q", tc.prof.Name, tc.flag, tc.config, got, err, tc.errWords)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s flag %q config %q: %q, %v; want %q", tc.prof.Name, tc.flag, tc.config, got, err, tc.want)
		}
	}
}

// TestAskModeByVersion: the asking mode is chosen by what the installed
// CLI's --version prints, and goes before the --agent-arg arguments.
func TestAskModeByVersion(t *testing.T) {
	claude, _ := profile.BuiltinProfile("claude")
	opencode, _ := profile.BuiltinProfile("opencode")
	fake := func(out string, code int) string {
		p := filepath.Join(t.TempDir(), "claude")
		script := "#!/bin/sh\necho '" + out + "'\nexit " + string(rune('0'+code)) + "\n"
		if err := os.WriteFile(p, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		out      string
		code     int
		want     []string
		errWords string
	}{
		{out: "2.1.197 (Claude Code)", want: []string{"--permission-mode", "default"}},
		{out: "2.1.332 (Claude Code)", want: []string{"--permission-mode", "manual"}},
		{out: "oops", errWords: `"oops" names none`},
		{out: "boom", code: 3, errWords: "which could not be read"},
	} {
		bin := fake(tc.out, tc.code)
		argv, env, err := askMode(t.Context(), nil, claude, dispatchPlan{}, []string{bin, "--model", "m", "--verbose"}, 1)
		if tc.errWords != "" {
			if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tc.errWords) {
				t.Errorf("%q: %v, want a usage error %q", tc.out, err, tc.errWords)
			}
			continue
		}
		want := slices.Concat([]string{bin, "--model", "m"}, tc.want, []string{"--verbose"})
		if err != nil || !slices.Equal(argv, want) || len(env) != 0 {
			t.Errorf("%q: %q %q %v; want %q", tc.out, argv, env, err, want)
		}
	}
	// No version needed: opencode's mode is a variable, whatever it is.
	argv, env, err := askMode(t.Context(), nil, opencode, dispatchPlan{}, []string{"/nonexistent/opencode"}, 0)
	if err != nil || !slices.Equal(argv, []string{"/nonexistent/opencode"}) || len(env) != 1 || !strings.HasPrefix(env[0], "OPENCODE_PERMISSION=") {
		t.Errorf("opencode: %q %q %v", argv, env, err)
	}
}
