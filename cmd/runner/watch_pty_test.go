package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestWatchRestoresTerminal runs `runner watch` on a pty of its own
// (creack/pty): the terminal is raw while it runs, q exits 0, and after
// it every terminal mode is back as it was (termios compared whole) and
// every DEC private mode it set (alternate screen, hidden cursor,
// bracketed paste, …) was reset. With NO_COLOR no colour escape is
// written.
func TestWatchRestoresTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	bin, err := exec.LookPath("runner") // the test binary, as testscript installs it
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	sockDir, err := os.MkdirTemp("/tmp", "rwp")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "s")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tmuxctl.New(sock).KillServer(ctx)
		os.RemoveAll(sockDir)
	})
	home := filepath.Join(work, "home")
	env := []string{"HOME=" + home, "XDG_STATE_HOME=" + home + "/.local/state", "XDG_CONFIG_HOME=" + home + "/.config",
		"RUNNER_TMUX_SOCKET=" + sock, "TERM=xterm-256color", "PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	d := exec.Command(bin, "dispatch", proj, "--agent", "sim", "write hello.txt hi")
	d.Env = env
	if out, err := d.CombinedOutput(); err != nil {
		t.Fatalf("dispatch: %v\n%s", err, out)
	}

	colour := regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;5;\d+|38;2;[\d;]+)m`)
	out := watchOnPty(t, bin, env)
	if !colour.Match(out) {
		t.Errorf("no colour escape written with colours allowed (the NO_COLOR check below would prove nothing)")
	}
	out = watchOnPty(t, bin, append(env, "NO_COLOR=1"))
	if m := colour.Find(out); m != nil {
		t.Errorf("NO_COLOR=1: colour escape %q written", m)
	}
}

// watchOnPty runs `runner watch` on a new 80x24 pty until its first
// screen shows, checks the terminal is raw, types q, and checks the exit
// status and the modes after; it returns all the output.
func watchOnPty(t *testing.T, bin string, env []string) []byte {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	before, err := unix.IoctlGetTermios(int(tty.Fd()), ioctlReadTermios)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "watch")
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		buf bytes.Buffer
	)
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			mu.Lock()
			buf.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t0 := clock.Now()
	output := func() []byte { mu.Lock(); defer mu.Unlock(); return bytes.Clone(buf.Bytes()) }
	deadline := clock.Now().Add(20 * time.Second)
	for !bytes.Contains(output(), []byte("write hello.txt hi")) {
		if clock.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no first screen within 20s; output:\n%q", output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	during, err := unix.IoctlGetTermios(int(tty.Fd()), ioctlReadTermios)
	if err != nil {
		t.Fatal(err)
	}
	if during.Lflag&(unix.ICANON|unix.ECHO) != 0 {
		t.Errorf("while watch runs the terminal is not raw: lflag %#x", during.Lflag)
	}
	t.Logf("first screen after %s", clock.Since(t0))
	if _, err := ptmx.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch after q: %v; output:\n%q", err, output())
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("watch did not exit within 10s of q")
	}
	after, err := unix.IoctlGetTermios(int(tty.Fd()), ioctlReadTermios)
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Errorf("terminal modes not restored:\nbefore %+v\nafter  %+v", *before, *after)
	}
	time.Sleep(100 * time.Millisecond) // the last bytes through the pty
	out := output()
	checkModesReset(t, out)
	return out
}

// checkModesReset checks that every DEC private mode set (ESC[?Nh) is
// reset (ESC[?Nl) after its last setting.
func checkModesReset(t *testing.T, out []byte) {
	t.Helper()
	re := regexp.MustCompile(`\x1b\[\?([\d;]+)([hl])`)
	last := map[string]string{}
	for _, m := range re.FindAllSubmatch(out, -1) {
		for _, mode := range strings.Split(string(m[1]), ";") {
			last[mode] = string(m[2])
		}
	}
	if last["1049"] != "l" {
		t.Errorf("alternate screen not left (mode 1049: %q)", last["1049"])
	}
	defaultOn := map[string]bool{"7": true, "25": true} // autowrap, cursor shown
	for mode, v := range last {
		if want := map[bool]string{true: "h", false: "l"}[defaultOn[mode]]; v != want {
			t.Errorf("mode ?%s left %s (want %s, its default)", mode, v, want)
		}
	}
	// Keyboard modes: the kitty protocol flags pushed (CSI > N u) are
	// popped (CSI < u), xterm's modifyOtherKeys (CSI > 4 ; N m) reset.
	if i := bytes.LastIndex(out, []byte("\x1b[>1u")); i >= 0 && !regexp.MustCompile(`\x1b\[<\d*u`).Match(out[i:]) {
		t.Errorf("kitty keyboard flags pushed and not popped")
	}
	if i := bytes.LastIndex(out, []byte("\x1b[>4;2m")); i >= 0 && !regexp.MustCompile(`\x1b\[>4(;0)?m`).Match(out[i:]) {
		t.Errorf("modifyOtherKeys left on")
	}
}
