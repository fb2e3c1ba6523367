package remote

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/sshtest"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/profile"
)

// TestDemux: tail's output of the pane-died and events files sorted back
// into their local copies: the headers switch files, the empty line tail
// writes before a header is not the file's (an empty line of the file
// is), a replay after a reconnect skips what the copy has, the died copy
// keeps only hook lines, and words before any header are ssh's.
func TestDemux(t *testing.T) {
	for _, c := range []struct {
		name                 string
		in                   string
		skipDied, skipEvents int64
		died, events, other  string
	}{
		{name: "first header, then both",
			in:   "==> /r/died <==\n\n==> /r/ev <==\n{\"a\":1}\n\n==> /r/died <==\n%3 0\n",
			died: "%3 0\n", events: "{\"a\":1}\n"},
		{name: "an empty line of the file is kept",
			in:     "==> /r/ev <==\n{\"a\":1}\n\n{\"b\":2}\n",
			events: "{\"a\":1}\n\n{\"b\":2}\n"},
		{name: "a replay skips what is here",
			in:       "==> /r/died <==\n%1 0\n%2 1\n\n==> /r/ev <==\n{\"a\":1}\n{\"b\":2}\n",
			skipDied: int64(len("%1 0\n")), skipEvents: int64(len("{\"a\":1}\n")),
			died: "%2 1\n", events: "{\"b\":2}\n"},
		{name: "the died copy keeps hook lines only",
			in:   "==> /r/died <==\nclosed\ngarbage here\n%7 -1\n",
			died: "closed\n%7 -1\n"},
		{name: "the tmux server there is gone: closed",
			in:   "==> /r/ev <==\n{\"a\":1}\n" + serverGone + "\n",
			died: "closed\n", events: "{\"a\":1}\n"},
		{name: "ssh's words before any header",
			in:   "mux_client_request_session: refused\n==> /r/died <==\nclosed\n",
			died: "closed\n", other: "mux_client_request_session: refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			open := func(name string) *os.File {
				f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				return f
			}
			var other []string
			died := &demuxTarget{f: open("died"), skip: c.skipDied, keep: diedLine.Re().MatchString}
			d := &demux{died: died, targets: map[string]*demuxTarget{
				"==> /r/died <==": died,
				"==> /r/ev <==":   {f: open("ev"), skip: c.skipEvents},
			}, other: func(l string) { other = append(other, l) }}
			s := &lineSplitter{line: d.line}
			// Written in odd pieces, as a pipe delivers them.
			for in := c.in; in != ""; {
				n := min(len(in), 7)
				if _, err := s.Write([]byte(in[:n])); err != nil {
					t.Fatal(err)
				}
				in = in[n:]
			}
			read := func(name string) string {
				b, _ := os.ReadFile(filepath.Join(dir, name))
				return string(b)
			}
			if got := read("died"); got != c.died {
				t.Errorf("died copy %q, want %q", got, c.died)
			}
			if got := read("ev"); got != c.events {
				t.Errorf("events copy %q, want %q", got, c.events)
			}
			if got := strings.Join(other, "|"); got != c.other {
				t.Errorf("ssh's words %q, want %q", got, c.other)
			}
		})
	}
}

// TestMirrorScriptFileAppears runs the stream's script through a real
// sshd for a task whose transcript does not exist yet (pipe-pane creates
// it as the agent starts): the script creates every file before tailing
// it (GNU tail -F misses, for good, a file created while it sets up its
// watch: a race of a few ms that lost whole transcripts), and every byte
// written after comes through.
func TestMirrorScriptFileAppears(t *testing.T) {
	srv := sshtest.Start(t)
	s := &transport.SSH{Destination: sshtest.Alias, Args: srv.SSHArgs(), ControlDir: t.TempDir()}
	if err := s.Prepare(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Exit()
	})
	dir := filepath.Join(t.TempDir(), "t_aaaaaaaa")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := FilesIn(dir)
	cmd := s.Command(context.Background(), "sh", "-c", mirrorScript, "sh", files.Transcript, files.Died, files.Events, "1", "-S", filepath.Join(t.TempDir(), "none"))
	out := &syncBuffer{}
	cmd.Stdout = out
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	for _, p := range []string{files.Transcript, files.Died, files.Events} {
		waitFile(t, p)
	}
	time.Sleep(100 * time.Millisecond) // the tails start
	appendTo(t, files.Transcript, "hello\n")
	appendTo(t, files.Transcript, "more\n")
	for deadline := clock.Now().Add(5 * time.Second); clock.Now().Before(deadline) && len(out.String()) < len("hello\nmore\n"); {
		time.Sleep(20 * time.Millisecond)
	}
	if out.String() != "hello\nmore\n" {
		t.Errorf("streamed %q", out.String())
	}
}

func waitFile(t *testing.T, p string) {
	t.Helper()
	for deadline := clock.Now().Add(5 * time.Second); clock.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(p); err == nil {
			return
		}
	}
	t.Fatalf("the stream's script did not create %s before tailing it", p)
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestPrepareWritesHookFiles: a hook of several files (Copilot CLI's
// plugin: its manifest and its hooks; any settings file) is written on a
// host through a real sshd, each file byte for byte (quotes, '%', no
// trailing newline, an empty one), with the task's transcript and events
// files, all the user's alone.
func TestPrepareWritesHookFiles(t *testing.T) {
	srv := sshtest.Start(t)
	s := &transport.SSH{Destination: sshtest.Alias, Args: srv.SSHArgs(), ControlDir: t.TempDir()}
	if err := s.Prepare(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Exit() })
	dir := filepath.Join(t.TempDir(), "t_bbbbbbbb")
	files := FilesIn(dir)
	hl := &profile.HookLaunch{
		Settings:     []byte(`{"version":1,"hooks":{"agentStop":[{"bash":"'/x y/runner' hook --task t_b Stop","n":"100%s"}]}}` + "\n"),
		SettingsPath: filepath.Join(files.HookDir, "hooks", "hooks.json"),
		Files: []profile.HookFile{
			{Path: filepath.Join(files.HookDir, "plugin.json"), Data: []byte(`{"name":"runner-turn-end"}`)},
			{Path: filepath.Join(files.HookDir, "empty"), Data: nil},
			{Path: filepath.Join(files.HookDir, "last.ts"), Data: []byte("line one\n\tline \\two $HOME `x`\n\n")},
		},
	}
	if err := prepare(t.Context(), s, files, hl); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{hl.SettingsPath: hl.Settings, files.Transcript: nil, files.Events: nil}
	for _, f := range hl.Files {
		want[f.Path] = f.Data
	}
	for p, data := range want {
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: %q (%v), want %q", p, got, err, data)
		}
		if st, err := os.Stat(p); err == nil && st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, want the user's alone", p, st.Mode())
		}
	}
}

// TestMirrorLostTimer: the host counts as lost once no session of the
// stream has been up for lostAfter, told by the loop's own timer (the
// sequence, not a time, is asserted): while an attempt still hangs (as
// ssh does for its ConnectTimeout on a silent host), after attempts
// refused at once, and never while a session is up or while the first
// one is slow to come up (within its grace); a session that was up and
// dropped counts from its drop, and the reason says why.
func TestMirrorLostTimer(t *testing.T) {
	const after = 300 * time.Millisecond
	for _, c := range []struct {
		name string
		once func(ctx context.Context, up func(), n int) error
		lost bool   // lost is reported
		why  string // in its reason
	}{
		{name: "an attempt that hangs", lost: true, why: "no session of the stream came up",
			once: func(ctx context.Context, _ func(), _ int) error { <-ctx.Done(); return ctx.Err() }},
		{name: "attempts refused", lost: true, why: "connection refused",
			once: func(context.Context, func(), int) error {
				return errors.New("ssh: connect to host: connection refused")
			}},
		{name: "a slow first session", lost: false,
			once: func(ctx context.Context, up func(), _ int) error {
				time.Sleep(after + after/4) // past lostAfter, within the first session's grace
				up()
				<-ctx.Done()
				return ctx.Err()
			}},
		{name: "a session up", lost: false,
			once: func(ctx context.Context, up func(), _ int) error { up(); <-ctx.Done(); return ctx.Err() }},
		{name: "up, dropped, then hanging", lost: true, why: "the session ended",
			once: func(ctx context.Context, up func(), n int) error {
				if n == 0 {
					up()
					time.Sleep(2 * after) // longer than lostAfter: up all along
					return errors.New("the session ended")
				}
				<-ctx.Done()
				return ctx.Err()
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &mirror{name: "box", dest: "u@box", lostAfter: after}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			lost := make(chan error, 1)
			n := 0
			done := make(chan struct{})
			go func() {
				defer close(done)
				m.loop(ctx, func(ctx context.Context, up func()) error { n++; return c.once(ctx, up, n-1) }, func(err error) { lost <- err })
			}()
			select {
			case err := <-lost:
				if !c.lost {
					t.Fatalf("lost reported with a session up: %v", err)
				}
				if !errors.Is(err, ErrHostLost) || !strings.Contains(err.Error(), "host box unreachable since") || !strings.Contains(err.Error(), c.why) {
					t.Errorf("lost: %v, want ErrHostLost, the host and %q", err, c.why)
				}
			case <-time.After(10 * after):
				if c.lost {
					t.Fatal("no lost reported")
				}
			}
			cancel()
			<-done
		})
	}
}

// TestDemuxStreamUp: the script's first line says the session is up, and
// is neither ssh's words nor a file's.
func TestDemuxStreamUp(t *testing.T) {
	ups := 0
	var other []string
	d := &demux{up: func() { ups++ }, targets: map[string]*demuxTarget{}, other: func(l string) { other = append(other, l) }}
	s := &lineSplitter{line: d.line}
	if _, err := s.Write([]byte("Warning: a word of ssh's\n" + streamUp + "\n")); err != nil {
		t.Fatal(err)
	}
	if ups != 1 || strings.Join(other, "|") != "Warning: a word of ssh's" {
		t.Errorf("up told %d times, ssh's words %q", ups, other)
	}
}

// syncBuffer is a bytes.Buffer one goroutine writes and another reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
