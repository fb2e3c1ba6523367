package textutil

import (
	"slices"
	"testing"
)

// TestLines: every line break splits, CR LF once.
func TestLines(t *testing.T) {
	got := Lines("a\nb\r\nc\rd\ve\ff\u0085g\u2028h\u2029i")
	if want := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}; !slices.Equal(got, want) {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}

// TestLinesEdges: empty text, a trailing break, CR LF split across
// nothing, invalid UTF-8 kept as it is.
func TestLinesEdges(t *testing.T) {
	for in, want := range map[string][]string{
		"":           {""},
		"a\n":        {"a", ""},
		"\r\n\r":     {"", "", ""},
		"a\xffb\nc":  {"a\xffb", "c"},
		"\xe0\u0085": {"\xe0", ""},
	} {
		if got := Lines(in); !slices.Equal(got, want) {
			t.Errorf("Lines(%q) = %q, want %q", in, got, want)
		}
	}
}
