package textutil

import "testing"

func TestFirstLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"one", "one"},
		{"\n  \n  two  \nthree", "two"},
		{"a\r\nb", "a"},
	} {
		if got := FirstLine(c.in); got != c.want {
			t.Errorf("FirstLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in         string
		n          int
		runes, byt string
	}{
		{"short", 10, "short", "short"},
		{"abcdef", 4, "abc…", "a…"},
		{"héllo wörld", 5, "héll…", "h…"},
		{"ééé", 4, "ééé", "…"},
	} {
		if got := ClipRunes(c.in, c.n); got != c.runes {
			t.Errorf("ClipRunes(%q, %d) = %q, want %q", c.in, c.n, got, c.runes)
		}
		if got := ClipBytes(c.in, c.n); got != c.byt {
			t.Errorf("ClipBytes(%q, %d) = %q, want %q", c.in, c.n, got, c.byt)
		}
	}
}

func TestOrDash(t *testing.T) {
	if OrDash("") != "-" || OrDash("x") != "x" {
		t.Error("OrDash")
	}
}

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\n\n  \n", 1, "b"},
		{"a", 5, "a"},
		{"", 3, ""},
		{"\n\n", 3, ""},
		{"a\n\nb", 2, "\nb"},
	} {
		if got := LastLines(tc.s, tc.n); got != tc.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
