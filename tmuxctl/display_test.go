package tmuxctl

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/runner-cli/runner/internal/clock"
)

// hostile is task text a user (or an agent) could put in a title: shell
// command substitution in tmux's format syntax, a format variable, a style,
// a command separator, a leading '-' and a trailing ';'.
func hostile(dir string) string {
	return "-d 0 #(touch " + filepath.Join(dir, "pwned") + ") #{pane_id} #[fg=red] a;b ;"
}

func TestFormatLiteral(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"#(rm -rf ~)", "##(rm -rf ~)"},
		{"#{pane_id} ##", "##{pane_id} ####"},
		{"a\nb\tc\x1b[31md", "a b c [31md"},
		{"ünï #", "ünï ##"},
		{"-x;", "-x;"},
	} {
		if got := FormatLiteral(tc.in); got != tc.want {
			t.Errorf("FormatLiteral(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestFormatLiteralExpandsToItself checks the escaping against tmux's own
// format expansion: display-message -p prints the expanded text, and runs
// nothing.
func TestFormatLiteralExpandsToItself(t *testing.T) {
	c := testServer(t)
	ctx := testCtx(t)
	shellPane(t, c, "fmt")
	dir := t.TempDir()
	text := hostile(dir)
	out, err := c.run(ctx, nil, "display-message", "-p", "-t", "=fmt:", "--", Arg(FormatLiteral(text)))
	if err != nil {
		t.Fatal(err)
	}
	// Expansion keeps "##[" for the drawing step, which draws "#[" (the
	// status line itself is checked in TestDisplayMessage).
	want := strings.ReplaceAll(text, "#[", "##[")
	if got := strings.TrimSuffix(out, "\n"); got != want {
		t.Errorf("expanded %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("#(...) in the text ran a command")
	}
}

// TestDisplayMessage attaches a real client (on a pty) to a session and
// checks the hostile text shows literally on its status line, and that
// nothing is run; a session without clients reaches nobody, silently.
func TestDisplayMessage(t *testing.T) {
	c := testServer(t)
	ctx := testCtx(t)
	shellPane(t, c, "seen")
	shellPane(t, c, "alone")
	dir := t.TempDir()

	n, err := c.DisplayMessage(ctx, "alone", "nobody sees this", time.Second)
	if err != nil || n != 0 {
		t.Fatalf("no client: DisplayMessage = %d, %v; want 0, nil", n, err)
	}
	if _, err := c.DisplayMessage(ctx, "nosuch", "x", 0); err == nil {
		t.Error("a missing session: want an error")
	}

	cmd := exec.Command(c.bin, append(c.ServerArgs(), "attach-session", "-t", "=seen")...)
	cmd.Env = append(CleanEnv(os.Environ()), "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
	})
	text := hostile(dir)
	deadline := clock.Now().Add(10 * time.Second)
	for {
		n, err = c.DisplayMessage(ctx, "seen", text, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if clock.Now().After(deadline) {
			t.Fatal("the attached client never showed in list-clients")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		mu.Lock()
		got := screen.String()
		mu.Unlock()
		if strings.Contains(got, text) {
			break
		}
		if clock.Now().After(deadline) {
			t.Fatalf("the client's terminal never showed %q; it got:\n%q", text, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("#(...) in the message ran a command")
	}
}
