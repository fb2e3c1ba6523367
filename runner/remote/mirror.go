// Streaming a remote task's files back: the pane's transcript and its
// pane-died lines, into local copies the event-driven monitor watches as it
// watches a local task's.

package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/tmuxctl"
)

// ErrHostLost is wrapped when the connection to a task's host is lost for
// longer than DefaultHostLostAfter: the task is left orphaned, and `runner
// resume` reconnects.
var ErrHostLost = errors.New("the connection to the host was lost")

// DefaultHostLostAfter is how long the stream of a remote task may stay
// down (ssh retried meanwhile) before the task counts as orphaned;
// RUNNER_HOST_LOST_AFTER (a Go duration) overrides it. With ssh's
// keepalive (transport: a silent host is found within about 15 s), a host
// that stops answering orphans its tasks within 30 s.
const DefaultHostLostAfter = 10 * time.Second

// Lost is the error of a host that stopped answering at since: "host
// NAME unreachable since 15:04:05 UTC (DEST): …", wrapping err (which
// wraps ErrHostLost for a task's stream).
func Lost(name, dest string, since time.Time, err error) error {
	return fmt.Errorf("host %s unreachable since %s (%s): %w", name, since.UTC().Format(time.TimeOnly)+" UTC", dest, err)
}

// mirrorScript runs on the host, in one ssh session per task: the
// transcript from byte $4 on to stdout; the pane-died file and the hook
// events file ($2, $3) whole to stderr, after streamUp (the session is up),
// by one tail, which names the file
// before each part ("==> FILE <==", after an empty line but the first);
// tail's own messages dropped; serverGone when the tmux server (the
// tmux command after $4, tmuxctl.HostArgv: the script names no program)
// exits; all followed (-F) until stdin ends, that
// is until the local side goes or the connection drops. Every file exists
// before its tail starts: GNU tail -F misses a file created while it sets
// up its watch, for good (seen here: pipe-pane created the transcript a
// few ms after the stream started, and not a byte of it came).
const mirrorScript = `log=$1 died=$2 ev=$3 from=$4; shift 4
umask 077
mkdir -p "${ev%/*}" && : >> "$log" && : >> "$died" && : >> "$ev" || exit 3
exec 3>&2
echo '` + streamUp + `' >&3
tail -c +"$from" -F -- "$log" 2>/dev/null &
a=$!
tail -n +1 -F -- "$died" "$ev" 2>/dev/null >&3 &
b=$!
(p=; while [ -z "$p" ]; do p=$("$@" display-message -p '#{pid}' 2>/dev/null) || sleep 1; done
 while kill -0 "$p" 2>/dev/null; do sleep 2; done; echo '` + serverGone + `' >&3) </dev/null &
c=$!
cat >/dev/null
kill $a $b $c 2>/dev/null`

// streamUp is the first line the stream's script writes (among the
// pane-died lines, before any): the session is up, the host answers.
const streamUp = "runner: the stream is up"

// serverGone is the line the stream's script writes (among the pane-died
// lines) when the host's tmux server is gone: no hook of its runs then,
// and the script there checks it every 2 s with no traffic here.
const serverGone = "runner: the tmux server is gone"

// diedLine is a line the pane-died hooks write: "%PANE STATUS" or
// "closed".
var diedLine = textutil.LazyRegexp(`^(%\d+ -?\d+|closed)$`)

// mirror streams a remote task's files into their local copies.
type mirror struct {
	c          *hosts.Conn
	name, dest string // the host's, for the reason of its loss
	remote     Files
	local      Local
	lostAfter  time.Duration

	mu     sync.Mutex
	sshErr string // the last words of ssh that were not pane-died lines
}

// loop runs the stream (once), starting it again when it ends (a dropped
// connection: the next ssh makes a new one), until ctx ends. The host
// counts as lost when no session of the stream has been up (its script
// ran there: once calls up) for lostAfter: since the last one ended, or
// since the start. A timer of its own says so, whatever the attempt of
// the moment is doing (one may wait ssh's ConnectTimeout): lost is
// called once, at most lostTick after that moment, and the attempts go
// on. So a host is lost within ssh's finding the connection dead (at
// once when refused, within 15 s when silent: transport's keepalive) and
// lostAfter, both bounded, never a sum of attempts. Before any session
// was up and while no attempt failed, the bound is firstSessionGrace
// times lostAfter.
func (m *mirror) loop(ctx context.Context, once func(context.Context, func()) error, lost func(error)) {
	var (
		mu        sync.Mutex
		up, wasUp bool
		downSince = clock.Now()
		lastErr   error
	)
	setUp := func() {
		mu.Lock()
		up, wasUp = true, true
		mu.Unlock()
	}
	done := make(chan struct{})
	defer close(done)
	go func() { // the lost-timer
		tick := time.NewTicker(min(lostTick, max(m.lostAfter/4, time.Millisecond)))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-tick.C:
			}
			mu.Lock()
			bound := m.lostAfter
			if !wasUp && lastErr == nil {
				// The first session still on its way, none failed yet: a
				// loaded machine's slow start, or a silent host. It gets
				// twice the time.
				bound = firstSessionGrace * m.lostAfter
			}
			fire, since, err := !up && clock.Since(downSince) >= bound, downSince, lastErr
			mu.Unlock()
			if fire {
				why := "no session of the stream came up"
				if err != nil {
					why = err.Error()
				}
				lost(Lost(m.name, m.dest, since, fmt.Errorf("%w for %v: %s%s", ErrHostLost, m.lostAfter.Round(time.Second), why, m.lastWords())))
				return
			}
		}
	}()
	wait := 200 * time.Millisecond
	for ctx.Err() == nil {
		err := once(ctx, setUp)
		if ctx.Err() != nil {
			return
		}
		mu.Lock()
		if up {
			// It was up: a new drop, seen now (not when the session
			// began: a drop after a long stream is not a host lost for
			// that long).
			downSince, wait = clock.Now(), 200*time.Millisecond
		}
		up, lastErr = false, err
		mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// firstSessionGrace times lostAfter is how long the stream's first
// session may take to come up while no attempt has failed: on a machine
// loaded by a burst an ssh session can take longer than lostAfter to
// start, and a healthy host is not lost for that. An attempt that fails
// (refused, dropped) brings the bound back to lostAfter.
const firstSessionGrace = 2

// lostTick is how often the lost-timer of a stream looks (at most).
const lostTick = 500 * time.Millisecond

// once runs one ssh session of the stream until it ends, calling up when
// its script runs there (its first line).
func (m *mirror) once(ctx context.Context, up func()) error {
	size := func(p string) int64 {
		if fi, err := os.Stat(p); err == nil {
			return fi.Size()
		}
		return 0
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, p := range []string{m.local.Transcript, m.local.Died, m.local.Events} {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	argv := []string{"sh", "-c", mirrorScript, "sh", m.remote.Transcript, m.remote.Died, m.remote.Events,
		strconv.FormatInt(size(m.local.Transcript)+1, 10)}
	cmd := m.c.Transport().Command(ctx, append(argv, tmuxctl.HostArgv(m.c.TC().Socket())...)...)
	// The session lives as long as its stdin: a pipe this side holds
	// open, so the tails there end when this process or the connection
	// goes.
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer w.Close()
	cmd.Stdin = r
	cmd.Stdout = files[0]
	died := &demuxTarget{f: files[1], skip: size(m.local.Died), keep: diedLine.Re().MatchString}
	d := &demux{died: died, up: up, targets: map[string]*demuxTarget{
		"==> " + m.remote.Died + " <==":   died,
		"==> " + m.remote.Events + " <==": {f: files[2], skip: size(m.local.Events)},
	}, other: func(l string) {
		m.mu.Lock()
		m.sshErr = l
		m.mu.Unlock()
	}}
	cmd.Stderr = &lineSplitter{line: d.line}
	err = cmd.Start()
	r.Close()
	if err != nil {
		return err
	}
	return cmd.Wait()
}

// demux sorts the lines of tail's output of several files back into their
// local copies, which hold a prefix of each: a file's lines are
// replayed whole on every new session, and the first skip bytes of them
// are already here.
type demux struct {
	targets map[string]*demuxTarget // by tail's header line
	died    *demuxTarget            // the pane-died copy
	up      func()                  // the stream's script runs there (nil: nothing to tell)
	cur     *demuxTarget
	empty   bool // an empty line is held: tail's, if a header follows
	other   func(string)
}

type demuxTarget struct {
	f    *os.File
	skip int64
	keep func(string) bool // nil: every line
}

func (d *demux) line(l string) {
	if l == streamUp {
		if d.up != nil {
			d.up()
		}
		return
	}
	if l == serverGone {
		// As tmux's own window-unlinked hook says: the window is gone.
		if t := d.died; t != nil {
			_, _ = t.f.WriteString("closed\n")
		}
		return
	}
	if t, ok := d.targets[l]; ok {
		d.cur, d.empty = t, false // the empty line was tail's
		return
	}
	if d.cur == nil {
		d.other(l) // before any file: ssh's own words
		return
	}
	if d.empty {
		d.empty = false
		d.cur.put("")
	}
	if l == "" {
		d.empty = true
		return
	}
	d.cur.put(l)
}

func (t *demuxTarget) put(l string) {
	if n := int64(len(l)) + 1; t.skip > 0 {
		t.skip -= n
		return
	}
	if t.keep != nil && !t.keep(l) {
		return
	}
	_, _ = t.f.WriteString(l + "\n")
}

func (m *mirror) lastWords() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sshErr == "" {
		return ""
	}
	return ": " + strings.TrimSpace(m.sshErr)
}

// lineSplitter calls line for each whole line written to it.
type lineSplitter struct {
	buf  []byte
	line func(string)
}

func (s *lineSplitter) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		s.line(string(s.buf[:i]))
		s.buf = s.buf[i+1:]
	}
}

// Local names the local copies of a remote task's files (see Files).
type Local struct {
	Transcript, Died, Events string
}

// Stream streams a remote task's files (remote, on c's host) into their
// local copies, appending from where those end, in one ssh session that is
// started again when it drops. It returns a context that ends, with a
// cause wrapping ErrHostLost, when the stream stays down for lostAfter,
// and the function that stops the stream.
func Stream(ctx context.Context, c *hosts.Conn, remote Files, local Local, lostAfter time.Duration) (context.Context, func(), error) {
	m := &mirror{c: c, name: c.Host().Name, dest: c.Host().Destination, remote: remote, local: local, lostAfter: lostAfter}
	for _, p := range []string{local.Transcript, local.Died, local.Events} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, nil, err
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("local copy of the host's files: %w", err)
		}
		f.Close()
	}
	runCtx, lost := context.WithCancelCause(ctx)
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.loop(sctx, m.once, func(err error) { lost(err) })
	}()
	return runCtx, func() {
		stop()
		<-done
		lost(nil)
	}, nil
}
