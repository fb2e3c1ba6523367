package agentsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/runner-cli/runner/internal/clock"
)

// waitLimit bounds every wait on the sim; generous for a loaded machine.
const waitLimit = 20 * time.Second

// term is the test's side of a pty: it records everything the sim writes
// and finds text in it after a moving mark.
type term struct {
	t         *testing.T
	ptmx, tty *os.File
	mu        sync.Mutex
	buf       []byte
	mark      int
}

func newTerm(t *testing.T, cols, rows uint16) *term {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: cols, Rows: rows}); err != nil {
		t.Fatalf("size pty: %v", err)
	}
	tm := &term{t: t, ptmx: ptmx, tty: tty}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		b := make([]byte, 64<<10)
		for {
			n, err := ptmx.Read(b)
			tm.mu.Lock()
			tm.buf = append(tm.buf, b[:n]...)
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		tty.Close()
		ptmx.Close()
		<-readDone
	})
	return tm
}

// termios returns the current attributes of the tty end.
func (tm *term) termios() syscall.Termios {
	tm.t.Helper()
	var out *syscall.Termios
	var err error
	rc, _ := tm.tty.SyscallConn()
	rc.Control(func(fd uintptr) { out, err = getTermios(fd) })
	if err != nil {
		tm.t.Fatalf("read termios: %v", err)
	}
	return *out
}

func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.ptmx.Write([]byte(s)); err != nil {
		tm.t.Fatalf("write to pty: %v", err)
	}
}

// paste sends text as a bracketed paste, in chunks of varying size so
// markers and UTF-8 sequences get split across reads.
func (tm *term) paste(text string) {
	tm.t.Helper()
	s := pasteStart + text + pasteEnd
	for i, n := 0, 1; i < len(s); n = n%13 + 1 {
		if len(s) > 4096 {
			n = 4093 // big pastes: bigger, still odd-sized chunks
		}
		j := min(i+n, len(s))
		tm.send(s[i:j])
		i = j
	}
}

func (tm *term) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return string(tm.buf)
}

// waitFor waits until s appears after the mark and moves the mark past it.
func (tm *term) waitFor(s string) {
	tm.t.Helper()
	deadline := clock.Now().Add(waitLimit)
	for {
		tm.mu.Lock()
		i := bytes.Index(tm.buf[tm.mark:], []byte(s))
		if i >= 0 {
			tm.mark += i + len(s)
		}
		tm.mu.Unlock()
		if i >= 0 {
			return
		}
		if clock.Now().After(deadline) {
			tm.t.Fatalf("no %q on the screen after %v; output after the mark:\n%q", s, waitLimit, tm.output()[tm.mark:])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// since returns the output after the mark (without moving it).
func (tm *term) since() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return string(tm.buf[tm.mark:])
}

// setMark moves the mark to the end of what was written so far.
func (tm *term) setMark() {
	tm.mu.Lock()
	tm.mark = len(tm.buf)
	tm.mu.Unlock()
}

// proc is a sim running as a child process on a pty.
type proc struct {
	*term
	cmd  *exec.Cmd
	done chan struct{}
	code int
	pre  syscall.Termios // termios before the sim started
}

const readyBottom = "╯" // the last glyph drawn for the ready box

// startSim runs the test binary as the sim with opts on a fresh 100x30 pty.
func startSim(t *testing.T, opts Options) *proc {
	t.Helper()
	tm := newTerm(t, 100, 30)
	if opts.SessionDir == "" {
		opts.SessionDir = t.TempDir() // not the user's home
	}
	o, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AGENTSIM_TEST_ROLE=sim", "AGENTSIM_TEST_OPTS="+string(o))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tm.tty, tm.tty, tm.tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	p := &proc{term: tm, cmd: cmd, done: make(chan struct{}), pre: tm.termios()}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sim: %v", err)
	}
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.code = 128 + int(ws.Signal())
			}
		default:
			p.code = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the sim to exit and checks its code and that the terminal
// was given back as it was found.
func (p *proc) wait(want int) {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(waitLimit):
		p.cmd.Process.Signal(syscall.SIGQUIT) // the Go runtime dumps the goroutines onto the pty
		<-p.done
		time.Sleep(100 * time.Millisecond)
		p.t.Fatalf("sim did not exit; output:\n%s", p.output())
	}
	if p.code != want {
		p.t.Errorf("exit code %d, want %d; output after mark:\n%q", p.code, want, p.since())
	}
	if got := p.termios(); got != p.pre {
		p.t.Errorf("terminal not restored:\n got %+v\nwant %+v", got, p.pre)
	}
	p.waitFor(leaveModes) // bracketed paste off, cursor shown
}

// submit pastes prompt, presses Enter and waits for the turn to end (the
// spinner, then the ready box again).
func (p *proc) submit(prompt string) {
	p.t.Helper()
	p.setMark()
	p.paste(prompt)
	p.send("\r")
	p.waitFor("Working…")
	p.waitFor(readyBottom)
}

// records reads the --record file.
func records(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l == "" {
			continue
		}
		var r struct {
			Prompt *string `json:"prompt"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Prompt == nil {
			t.Fatalf("bad record line %q: %v", l, err)
		}
		out = append(out, *r.Prompt)
	}
	return out
}
