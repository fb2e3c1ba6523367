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
