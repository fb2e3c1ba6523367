package plan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/doctor"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
)

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
		argv, env, err := (&Plan{Profile: claude}).askMode(t.Context(), versionOnly{}, []string{bin, "--model", "m", "--verbose"}, 1)
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
	argv, env, err := (&Plan{Profile: opencode}).askMode(t.Context(), versionOnly{}, []string{"/nonexistent/opencode"}, 0)
	if err != nil || !slices.Equal(argv, []string{"/nonexistent/opencode"}) || len(env) != 1 || !strings.HasPrefix(env[0], "OPENCODE_PERMISSION=") {
		t.Errorf("opencode: %q %q %v", argv, env, err)
	}
}

// versionOnly is a Machine that reads a CLI's version here, as runner's
// does (doctor.CachedVersion), and nothing else.
type versionOnly struct{ Machine }

func (versionOnly) CLIVersion(ctx context.Context, _, path string, args []string) (string, error) {
	return doctor.CachedVersion(ctx, "", path, args)
}
