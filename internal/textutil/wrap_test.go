package textutil

import "testing"

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"a b c", 10, "a b c"},
		{"aaa bbb ccc", 7, "aaa bbb\nccc"},
		{"aaa bbb ccc", 3, "aaa\nbbb\nccc"},
		{"averylongword b", 4, "averylongword\nb"},
		{"  spaced   out  ", 20, "spaced out"},
		{"héllo wörld", 5, "héllo\nwörld"},
		{"", 5, ""},
	} {
		if got := Wrap(tc.in, tc.width); got != tc.want {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
