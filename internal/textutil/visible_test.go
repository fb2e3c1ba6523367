package textutil

import (
	"bytes"
	"strings"
	"testing"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text\n\tindented", "plain text\n\tindented"},
		{"ünïcödé ✻ 日本", "ünïcödé ✻ 日本"},
		{"\x1b]52;c;aGk=\x07clip", "^[]52;c;aGk=^Gclip"},
		{"\x1b]0;title\x07", "^[]0;title^G"},
		{"\x1b[2Jcleared", "^[[2Jcleared"},
		{"a\rb", "a^Mb"},
		{"del\x7f", "del^?"},
		{"csi\u009b2J osc\u009d0;x\u009c", "csi^[[2J osc^[]0;x^[\\"},
		{"bad \x9b byte \xff", `bad \x9b byte \xff`},
		{"nul\x00", "nul^@"},
	} {
		if got := Visible(tc.in); got != tc.want {
			t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
		}
		var buf bytes.Buffer
		w := NewVisibleWriter(&buf)
		// byte by byte: sequences split across writes come out whole
		for i := 0; i < len(tc.in); i++ {
			w.Write([]byte{tc.in[i]})
		}
		w.Flush()
		if buf.String() != tc.want {
			t.Errorf("VisibleWriter byte by byte: %q, want %q", buf.String(), tc.want)
		}
	}
	if got := VisibleLine("a\nb\tc\x1b"); got != "a b c^[" {
		t.Errorf("VisibleLine: %q", got)
	}
}

// FuzzVisible: whatever comes in, nothing that acts on a terminal goes out.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"", "x", "\x1b]52;c;x\x07", "\u009b", "\xc2", "\xe2\x9c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Visible(s)
		for i := 0; i < len(out); i++ {
			if c := out[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				t.Fatalf("Visible(%q) = %q keeps control %#x", s, out, c)
			}
		}
		if strings.ContainsAny(out, "\u0080\u0081\u008d\u009b\u009c\u009d\u009e\u009f") {
			t.Fatalf("Visible(%q) = %q keeps a C1 control", s, out)
		}
	})
}
