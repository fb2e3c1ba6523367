package transport

import (
	"encoding/base64"
	"testing"
)

// FuzzParseReply: any line the host's shell sends back is a reply, a stray
// line, or a garbled reply: never a panic, never an exit status outside
// 0..255.
func FuzzParseReply(f *testing.F) {
	b := base64.StdEncoding.EncodeToString
	f.Add("7 0 "+b([]byte("out\n"))+" ", "7")
	f.Add("7 1  "+b([]byte("err")), "7")
	f.Add("ready b2s=", "1")
	f.Add("7 -1 !! ??", "7")
	f.Add("7 99999999999999999999  ", "7")
	f.Fuzz(func(t *testing.T, line, id string) {
		_, _, code, ok, err := parseReply(line, id)
		if ok && err == nil && (code < 0 || code > 255) {
			t.Fatalf("exit status %d from %q", code, line)
		}
	})
}
