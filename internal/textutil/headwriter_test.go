package textutil

import "testing"

func TestHeadWriter(t *testing.T) {
	w := &HeadWriter{Max: 5}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := w.String(); got != "abcde" {
		t.Errorf("kept %q, want abcde", got)
	}
}

// TestTailWriter: the last Max bytes are kept, whatever the writes'
// sizes; a rune cut at the start is dropped.
func TestTailWriter(t *testing.T) {
	w := &TailWriter{Max: 5}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := w.String(); got != "fghij" {
		t.Errorf("kept %q, want the last 5 bytes %q", got, "fghij")
	}
	w = &TailWriter{Max: 4}
	_, _ = w.Write([]byte("xé"))  // é is 2 bytes
	_, _ = w.Write([]byte("abc")) // kept: the second byte of é, then abc
	if got := w.String(); got != "abc" {
		t.Errorf("kept %q, want %q (no half rune)", got, "abc")
	}
}
