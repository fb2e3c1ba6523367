package tmuxctl

import (
	"strings"
	"testing"
	"time"
)

func TestPasteText(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		removed  int
	}{
		{"plain\n\ttext ünï ✻", "plain\n\ttext ünï ✻", 0},
		{"hello\x1b[201~INJECTED\x1b[Z\x1b", "hello[201~INJECTED[Z", 3},
		{"crlf\r\nline", "crlf\nline", 1},
		{"^C\x03 bs\x7f nul\x00", "^C bs nul", 3},
		{"c1 \u009b201~ \u0085", "c1 201~ ", 2},
		{"bad \xff\xfe bytes", "bad \xff\xfe bytes", 0},
		{"", "", 0},
	} {
		got, n := PasteText(tc.in)
		if got != tc.want || n != tc.removed {
			t.Errorf("PasteText(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.removed)
		}
	}
}

// TestPasteCannotEndTheBracketedPaste: an application that enabled
// bracketed paste (cat -v shows the markers) sees one paste, start to end,
// however the text tries to close it early: nothing of it arrives as keys.
func TestPasteCannotEndTheBracketedPaste(t *testing.T) {
	c := testServer(t)
	ctx := testCtx(t)
	pane, err := c.Launch(ctx, WindowSpec{Session: "bp", Size: Size{120, 20},
		Argv: []string{"sh", "-c", `printf '\033[?2004h'; stty -echo; exec cat -v`}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // cat is up (nothing on screen says so)
	if err := c.Paste(ctx, pane, "hello\x1b[201~INJECTED\x1b[Z\rend", true); err != nil {
		t.Fatal(err)
	}
	if err := c.SendKeys(ctx, pane, "Enter"); err != nil {
		t.Fatal(err)
	}
	var screen string
	waitFor(t, 10*time.Second, func() bool {
		screen, _ = c.CaptureScreen(ctx, pane)
		return strings.Contains(screen, "end")
	})
	if got := strings.Count(screen, "^[[201~"); got != 1 {
		t.Errorf("%d paste-end markers on the screen, want 1 (the paste's own):\n%s", got, screen)
	}
	if !strings.Contains(screen, "^[[200~hello[201~INJECTED[Zend^[[201~") {
		t.Errorf("the text did not arrive as one paste without its controls:\n%s", screen)
	}
}
