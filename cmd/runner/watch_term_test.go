package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/sshtest"
	"github.com/runner-cli/runner/tmuxctl"
)

// The `runner watch` scripts run the view in a pane of a second tmux
// server, the "terminal" (tmux is a real terminal emulator on a real
// pty, so what capture-pane returns is what a user sees), separate from
// the runner server the tasks run on (RUNNER_TMUX_SOCKET).

// watchEnvKeys is the environment the view's pane gets from the script.
var watchEnvKeys = []string{"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
	"RUNNER_TMUX_SOCKET", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
	"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "NO_COLOR"}

// termClient is the "terminal" server of the script.
func termClient(ts *testscript.TestScript) *tmuxctl.Client {
	return tmuxctl.New(filepath.Join(filepath.Dir(ts.Getenv("RUNNER_TMUX_SOCKET")), "t"))
}

// cmdWatchStart: watchstart COLS ROWS [ARGS...] starts `runner watch
// ARGS...` in a COLS×ROWS terminal; when it exits the pane prints
// "watch exited N" and stays.
func cmdWatchStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: watchstart COLS ROWS [ARGS...]")
	}
	tc := termClient(ts)
	argv := []string{"new-session", "-d", "-s", "term", "-x", args[0], "-y", args[1], "-c", ts.Getenv("PWD")}
	for _, k := range watchEnvKeys {
		if v := ts.Getenv(k); v != "" {
			argv = append(argv, "-e", k+"="+v)
		}
	}
	words := []string{"runner", "watch"}
	for _, a := range args[2:] {
		words = append(words, tmuxctl.ShellQuote(a))
	}
	argv = append(argv, strings.Join(words, " ")+`; echo "watch exited $?"; sleep 600`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := tc.Command(ctx, argv...)
	ts.Check(err)
	ts.Defer(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tc.KillServer(ctx)
	})
}

// cmdWatchKeys: watchkeys KEY... sends tmux key names to the terminal.
func cmdWatchKeys(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: watchkeys KEY...")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := termClient(ts).Command(ctx, append([]string{"send-keys", "-t", "term"}, args...)...)
	ts.Check(err)
}

// cmdWatchResize: watchresize COLS ROWS resizes the terminal.
func cmdWatchResize(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: watchresize COLS ROWS")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := termClient(ts).Command(ctx, "resize-window", "-t", "term", "-x", args[0], "-y", args[1])
	ts.Check(err)
}

// cmdWatchScreen: [!] watchscreen TEXT [TIMEOUT] waits until the terminal
// shows TEXT (a regexp), or with ! until it does not.
func cmdWatchScreen(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: watchscreen TEXT [TIMEOUT]")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	timeout := 20 * time.Second
	if len(args) == 2 {
		timeout, err = time.ParseDuration(args[1])
		ts.Check(err)
	}
	tc := termClient(ts)
	pollScreen(ts, fmt.Sprintf("watchscreen %q", args[0]), timeout,
		func(ctx context.Context) (string, error) { return tc.Command(ctx, "capture-pane", "-p", "-t", "term") },
		func(s string) bool { return re.MatchString(s) != neg })
}

// cmdWatchCap: watchcap FILE writes the terminal's screen to FILE with
// the volatile parts masked: task ids (t_1…, in order of appearance,
// same width) and ages (" age").
func cmdWatchCap(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: watchcap FILE")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(maskScreen(termScreen(ts))), 0o644))
}

var (
	taskIDRe = regexp.MustCompile(`t_[0-9a-z]{8}`)
	ageRe    = regexp.MustCompile(` (?:[ \d]{2}\d[smhd]| <1m) `)
)

func maskScreen(s string) string {
	ids := map[string]string{}
	s = taskIDRe.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("t_%08d", len(ids)+1)
		}
		return ids[id]
	})
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		b.WriteString(strings.TrimRight(ageRe.ReplaceAllString(l, "  age "), " ") + "\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func termScreen(ts *testscript.TestScript) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := termClient(ts).Command(ctx, "capture-pane", "-p", "-t", "term")
	ts.Check(err)
	return s
}

// cmdWatchBell: watchbell checks the terminal's window saw a bell.
func cmdWatchBell(ts *testscript.TestScript, neg bool, args []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := termClient(ts).Command(ctx, "display-message", "-p", "-t", "term", "#{window_bell_flag}")
	ts.Check(err)
	if got := strings.TrimSpace(out) == "1"; got == neg {
		ts.Fatalf("bell flag %q (want set: %v)", strings.TrimSpace(out), !neg)
	}
}

// cmdWaitProcess: waitprocess TEXT waits until a process whose command
// line contains TEXT runs (read from /proc).
func cmdWaitProcess(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitprocess TEXT")
	}
	deadline := clock.Now().Add(20 * time.Second)
	for clock.Now().Before(deadline) {
		cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, f := range cmdlines {
			b, err := os.ReadFile(f)
			if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), args[0]) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.Fatalf("no process with %q in its command line within 20s", args[0])
}

// cmdCmdlineFree: cmdlinefree TEXT fails if any process's command line
// (what `ps -eo args` shows every user) contains TEXT.
func cmdCmdlineFree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: cmdlinefree TEXT")
	}
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	if len(cmdlines) == 0 {
		ts.Fatalf("no /proc to read command lines from")
	}
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if line := strings.ReplaceAll(string(b), "\x00", " "); err == nil && strings.Contains(line, args[0]) {
			ts.Fatalf("%s: %q shows %q", f, line, args[0])
		}
	}
}

// cmdWaitClient: waitclient SESSION waits until a client of the runner
// server ($RUNNER_TMUX_SOCKET) shows SESSION.
func cmdWaitClient(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitclient SESSION")
	}
	c := tmuxctl.New(ts.Getenv("RUNNER_TMUX_SOCKET"))
	pollScreen(ts, "waitclient "+args[0], 20*time.Second,
		func(ctx context.Context) (string, error) {
			return c.Command(ctx, "list-clients", "-F", "#{client_session}")
		},
		func(s string) bool { return slices.Contains(strings.Fields(s), args[0]) })
}

// cmdSSHD: sshd starts a real OpenSSH server on 127.0.0.1 for the script
// (stopped at its end) and sets $SSH_CONFIG to a client config that
// reaches it as the host alias "loop". Scripts guard it with
// [!sshd] skip: the condition holds when sshd is installed, and always
// under CI (which installs it), so there a missing sshd fails.
// `sshd start NAME` starts one more, named, its config in $SSH_CONFIG_NAME
// (a pool of hosts); `sshd stop|restart [NAME]` stops or restarts one.
func cmdSSHD(ts *testscript.TestScript, neg bool, args []string) {
	usage := "usage: sshd [start NAME | stop [NAME] | restart [NAME] | pause [NAME] | resume [NAME]]"
	if neg || len(args) > 2 {
		ts.Fatalf("%s", usage)
	}
	h, _ := ts.Value(sshdKey{}).(*sshdHolder)
	name := ""
	if len(args) == 2 {
		name = args[1]
	}
	if len(args) >= 1 && args[0] != "start" {
		srv := h.get(name)
		if srv == nil {
			ts.Fatalf("sshd %s %s: no such sshd started in this script", args[0], name)
		}
		switch args[0] {
		case "stop":
			srv.Stop()
		case "restart":
			ts.Check(srv.Restart())
		case "pause": // silent: no keepalive answered, a new connection hangs
			srv.Pause()
		case "resume":
			srv.Resume()
		default:
			ts.Fatalf("%s", usage)
		}
		return
	}
	if len(args) == 1 {
		ts.Fatalf("%s", usage)
	}
	bin := sshtest.Sshd()
	if bin == "" {
		ts.Fatalf("sshd not installed (apt-get install openssh-server; CI installs it: see .ci/run)")
	}
	dir, err := os.MkdirTemp("/tmp", "sshd")
	ts.Check(err)
	srv, err := sshtest.StartIn(bin, dir)
	ts.Check(err)
	ts.Defer(func() { srv.Stop(); os.RemoveAll(dir) })
	if name == "" {
		ts.Setenv("SSH_CONFIG", srv.Config)
	} else {
		ts.Setenv("SSH_CONFIG_"+name, srv.Config)
	}
	if h != nil {
		h.set(name, srv)
	}
}

// sshdKey keys the script's sshdHolder in testscript's values (set up by
// scriptParams), so `sshd stop|restart` find the server `sshd` started.
type sshdKey struct{}

// sshdHolder holds the script's servers by name ("" for the first).
type sshdHolder struct {
	mu  sync.Mutex
	srv map[string]*sshtest.Server
}

func (h *sshdHolder) get(name string) *sshtest.Server {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.srv[name]
}

func (h *sshdHolder) set(name string, s *sshtest.Server) {
	h.mu.Lock()
	if h.srv == nil {
		h.srv = map[string]*sshtest.Server{}
	}
	h.srv[name] = s
	h.mu.Unlock()
}
