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
