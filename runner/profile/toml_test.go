package profile

import (
	"slices"
	"strings"
	"testing"
)

// TestCodexNotifyRead: the notify array of a Codex config.toml, read with
// the TOML library: values as Codex reads them, and errors that name the
// file and the line.
func TestCodexNotifyRead(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		want       []string
		err        string // a substring of the error; "" for none
	}{
		{"one line", "notify = [\"notify-send\", \"Codex\"]\n", []string{"notify-send", "Codex"}, ""},
		{"several lines, comments, escapes", "model = \"x\"\nnotify = [\n  'a b',  # comment\n  \"c\\\"d\\u00e9\",\n]\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n",
			[]string{"a b", `c"dé`}, ""},
		{"multi-line strings", "notify = ['''x\ny''', \"\"\"\nz\"\"\"]\n", []string{"x\ny", "z"}, ""},
		{"quoted key", "\"notify\" = [\"q\"]\n", []string{"q"}, ""},
		{"empty array", "notify = []\n", []string{}, ""},
		{"none", "model = \"x\"\n", nil, ""},
		{"in a table only", "[tui]\nnotify = [\"ignored\"]\n", nil, ""},
		{"after a table", "[table]\nx = 1\n", nil, ""},
		{"not an array", "model = 1\nnotify = \"notify-send\"\n", nil, `config.toml:2: key "notify": want an array of strings`},
		{"a number in it", "notify = [\n  \"a\",\n  3,\n]\n", nil, `config.toml:3: key "notify[1]": only strings are allowed in notify, not an integer`},
		{"unclosed", "notify = [\"a\",\n", nil, "config.toml:"},
		{"bad syntax elsewhere", "notify = [\"a\"]\n[x\n", nil, "config.toml:2:"},
		{"key twice", "notify = [\"a\"]\nnotify = [\"b\"]\n", nil, "config.toml:2:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := codexNotify(strings.NewReader(tc.toml), "config.toml")
			if tc.err == "" {
				if err != nil || !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
					t.Errorf("got %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || got != nil {
				t.Errorf("got %q, %v; want an error with %q", got, err, tc.err)
			}
		})
	}
}
