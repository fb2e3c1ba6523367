package tmuxctl

import "testing"

func TestStripEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                            "plain",
		"\x1b[38;5;239m❯\x1b[39m x\x1b[0m": "❯ x",
		"a\x1b]0;title\x07b":               "ab",
		"a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b": "alinkb",
		"a\x1b(Bb":           "ab",
		"a\x1b=b":            "ab",
		"trailing\x1b":       "trailing",
		"cut\x1b[38;5":       "cut",
		"a\x1bPq#0;2\x1b\\b": "ab",
		"a\x1b Fb":           "ab",
	} {
		if got := StripEscapes(in); got != want {
			t.Errorf("StripEscapes(%q) = %q, want %q", in, got, want)
		}
	}
}
