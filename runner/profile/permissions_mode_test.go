package profile

import (
	"errors"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/fault"
)

// TestPermissionsMode: the flag's mode, else the config's, else ask; a
// CLI without an asking mode falls back to its own default unless the
// flag asks for ask (exit 2).
func TestPermissionsMode(t *testing.T) {
	claude, _ := BuiltinProfile("claude")
	pi, _ := BuiltinProfile("pi")
	for _, tc := range []struct {
		prof           *Profile
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
		got, err := Permissions(tc.prof, tc.flag, tc.config)
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
