package ask

import (
	"strings"
	"testing"
)

// TestWriterText: each kind of answer's header, the answer under it,
// the FYI that could not be sent; a second and more is rounded to a
// tenth.
func TestWriterText(t *testing.T) {
	var b strings.Builder
	w := Writer(&b, false)
	for _, a := range []Answer{
		{Task: "t_a", Agent: "claude", Mode: ModeShadow, Answer: "handler.go\n", ElapsedMS: 1234},
		{Task: "t_b", Agent: "codex", Mode: ModeShadow, Error: "exit 1", ElapsedMS: 250},
		{Task: "t_c", Agent: "gemini", Mode: ModeShadow, Error: "killed", TimedOut: true, ElapsedMS: 30000},
		{Task: "t_d", Agent: "aider", Mode: ModeMessage},
		{Task: "t_e", Agent: "shell", Mode: ModeMessage, Error: "queue full"},
		{Task: "t_f", Agent: "claude", Mode: ModeShadow, Answer: "yes", FYIError: "refused", ElapsedMS: 10},
	} {
		w(a)
	}
	want := `== t_a (claude) answered in 1.2s
handler.go
== t_b (codex) failed after 250ms: exit 1
== t_c (gemini) timed out after 30s: killed
== t_d (aider): no headless mode; the question was sent to it as a message
== t_e (shell): no headless mode, and the question could not be sent as a message: queue full
== t_f (claude) answered in 10ms
yes
   (FYI to t_f not sent: refused)
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestWriterJSON: one object a line, HTML left as it is.
func TestWriterJSON(t *testing.T) {
	var b strings.Builder
	Writer(&b, true)(Answer{Task: "t_a", Agent: "claude", Mode: ModeShadow, Answer: "<b>&</b>"})
	if got := b.String(); !strings.HasPrefix(got, `{"task":"t_a","agent":"claude","mode":"shadow","answer":"<b>&</b>"`) || strings.Count(got, "\n") != 1 {
		t.Errorf("got %q", got)
	}
}
