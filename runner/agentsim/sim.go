package agentsim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	xterm "golang.org/x/term"
)

// Timings of the TUI.
const (
	spinnerEvery = 100 * time.Millisecond
	escWait      = 50 * time.Millisecond  // a lone ESC not followed by more bytes within this is the Escape key
	escGrace     = 500 * time.Millisecond // after that, "[" within this still continues the sequence (see decFlushed)
	ctrlCWindow  = time.Second            // C-c twice within this at an empty prompt exits
	historyKeep  = 500                    // history lines kept for a repaint after a resize
)

// Terminal modes switched on at start and off at exit.
const (
	enterModes = "\x1b[?2004h\x1b[?25l" // bracketed paste on, cursor hidden
	leaveModes = "\x1b[?2004l\x1b[?25h" // bracketed paste off, cursor shown
)

type mode int

const (
	modeStartup mode = iota
	modeTrust
	modeReady
	modeBusy
	modeAsk
	// modeBrowse is Codex's transcript browsing: Escape twice at an
	// empty prompt; the prompt box is hidden until Escape goes back.
	modeBrowse
)

// browseLine is what the browsing view shows instead of the prompt box
// (Codex's words).
const browseLine = "  Browsing transcript · ↑↓/jk scroll · ↵ rewind · esc back"

// Run runs the interactive simulated agent on the terminal tty until it
// exits, and returns its exit code: 0 after C-d or a double C-c at an empty
// prompt, N after `exit N`, 2 after `crash`, 1 when the trust dialog is
// refused, 128+signal after SIGINT, SIGTERM or SIGHUP, 130 when ctx ends.
// The screen is written to out (nil means tty).
//
// Run puts tty into raw mode and enables bracketed paste; both are undone
// before it returns, also on a panic. The error is non-nil only when Run
// could not work at all (tty is no terminal: ErrNotTerminal) or the
// terminal failed.
func Run(ctx context.Context, opts Options, tty *os.File, out io.Writer) (code int, err error) {
	if err := opts.fill(); err != nil {
		return 1, err
	}
	if out == nil {
		out = tty
	}
	rc, err := tty.SyscallConn() // Control, unlike Fd, keeps a pollable file non-blocking
	if err != nil {
		return 1, fmt.Errorf("agent-sim: %s: %w", tty.Name(), err)
	}
	old, cols, rows, err := enterRaw(tty, rc)
	if err != nil {
		return 1, err
	}
	defer func() {
		io.WriteString(out, leaveModes)
		rc.Control(func(fd uintptr) {
			if e := xterm.Restore(int(fd), old); e != nil && err == nil {
				err = fmt.Errorf("agent-sim: restore terminal attributes of %s: %w", tty.Name(), e)
			}
		})
	}()
	if _, err := io.WriteString(out, enterModes); err != nil {
		return 1, fmt.Errorf("agent-sim: write to terminal: %w", err)
	}
	sc := &screen{w: out, cols: cols, rows: rows}
	sc.start()

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGWINCH, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	input, readErr, stopReading := readInput(ctx, cancel, tty)
	defer stopReading()

	s := &sim{
		ctx:   ctx,
		opts:  &opts,
		sc:    sc,
		msgs:  make(chan turnMsg),
		hooks: make(chan error, 4),
		exec:  &executor{dir: opts.Dir, env: opts.Env, session: opts.sessionFile(), context: opts.contextHook()},
		// A late dialog comes only when none came before the box.
		trustLate: opts.TrustLate && !opts.Trust,
	}
	if opts.Resumed {
		sc.print("Resumed session " + opts.SessionID)
	}
	if len(opts.Hook) > 0 {
		s.exec.hook = func(ctx context.Context, prompt, event, answer string, usage *Usage) error {
			return runHook(ctx, s.opts, prompt, event, answer, usage)
		}
	}
	return s.loop(ctx, tty, rc, sigs, input, readErr)
}

// enterRaw puts tty into raw mode and returns its previous state and its
// size; a file that is no terminal is an error wrapping ErrNotTerminal.
func enterRaw(tty *os.File, rc syscall.RawConn) (old *xterm.State, cols, rows int, err error) {
	var rawErr error
	if err := rc.Control(func(fd uintptr) {
		if !xterm.IsTerminal(int(fd)) {
			rawErr = fmt.Errorf("agent-sim: %s is %w (run it in a terminal, or headless with -p PROMPT)", tty.Name(), ErrNotTerminal)
			return
		}
		old, rawErr = makeRaw(fd)
		cols, rows = termSize(fd)
	}); err != nil {
		return nil, 0, 0, fmt.Errorf("agent-sim: %s: %w", tty.Name(), err)
	}
	return old, cols, rows, rawErr
}

// readInput reads tty in a goroutine, handing over each chunk on input
// until ctx ends; the read error goes to readErr. stop (cancel first,
// then unblock the read where the file supports deadlines: a pty or a
// pollable terminal; elsewhere it ends with the process) waits for it.
func readInput(ctx context.Context, cancel context.CancelFunc, tty *os.File) (input <-chan []byte, readErr <-chan error, stop func()) {
	in := make(chan []byte, 16)
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := tty.Read(buf)
			if n > 0 {
				select {
				case in <- bytes.Clone(buf[:n]):
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				errc <- err
				return
			}
		}
	}()
	return in, errc, func() {
		cancel()                                         // first: the reader may be waiting to hand over a chunk
		if tty.SetReadDeadline(time.Unix(1, 0)) == nil { // a deadline long past: the read returns now
			<-done
			tty.SetReadDeadline(time.Time{})
		}
	}
}

// sim is the state of the interactive agent; only loop's goroutine touches it.
type sim struct {
	ctx   context.Context
	opts  *Options
	sc    *screen
	exec  *executor
	mode  mode
	input []byte
	dec   decoder

	sel       int // menu selection (trust, ask)
	question  string
	keyed     bool // the question is a confirm: y or n, no menu
	askReply  chan bool
	spin      int
	silent    bool
	lastCtrlC time.Time
	// lastEscape is when Escape was pressed at an empty prompt (twice
	// within ctrlCWindow opens the browsing view).
	lastEscape time.Time
	ticker     *time.Ticker

	turnID     int
	turnCancel context.CancelFunc
	prompt     string
	// trustLate: the late trust dialog is still to come (Options.TrustLate);
	// held is the prompt waiting behind it.
	trustLate bool
	held      string
	msgs      chan turnMsg
	hooks     chan error
}

// turnMsg is sent by a turn's goroutine to the loop.
type turnMsg struct {
	turn     int
	kind     int // msgLine, msgSilent, msgAsk, msgDone, msgPanic
	text     string
	on       bool // msgSilent: on; msgAsk: a confirm (keys y and n, no menu)
	reply    chan bool
	end      turnEnd
	err      error
	panicked any
}

const (
	msgLine = iota
	msgSilent
	msgAsk
	msgDone
	msgPanic
)

// exitNow ends the loop with a code.
type exitNow struct{ code int }

func (s *sim) loop(ctx context.Context, tty *os.File, rc syscall.RawConn, sigs chan os.Signal, input <-chan []byte, readErr <-chan error) (int, error) {
	// The spinner ticker runs only while a turn does: an idle sim wakes up
	// for nothing.
	s.ticker = time.NewTicker(spinnerEvery)
	s.ticker.Stop()
	defer s.ticker.Stop()
	escTimer := time.NewTimer(time.Hour)
	escTimer.Stop()
	startup := time.NewTimer(s.opts.Startup)
	defer func() {
		if s.turnCancel != nil {
			s.turnCancel()
		}
	}()
	for {
		var keys []key
		select {
		case <-ctx.Done():
			return 130, nil
		case sig := <-sigs:
			if sig == syscall.SIGWINCH {
				rc.Control(func(fd uintptr) { s.sc.cols, s.sc.rows = termSize(fd) })
				s.sc.repaint(s.liveLines())
				break
			}
			return 128 + int(sig.(syscall.Signal)), nil
		case err := <-readErr:
			return 1, fmt.Errorf("agent-sim: read terminal %s: %w", tty.Name(), err)
		case b := <-input:
			if s.mode == modeStartup {
				break // input before the prompt box is lost, as with real agents
			}
			keys = s.dec.feed(b)
			if s.dec.pendingEsc() {
				escTimer.Reset(escWait)
			}
		case <-escTimer.C:
			if s.dec.pendingEsc() {
				keys = s.dec.flush()
				escTimer.Reset(escGrace)
			} else {
				s.dec.expire()
			}
		case <-startup.C:
			if s.opts.Trust {
				s.mode, s.sel = modeTrust, 0
			} else {
				s.mode = modeReady
			}
			s.draw()
		case <-s.ticker.C:
			if s.mode == modeBusy && !s.silent {
				s.spin++
				s.draw()
			}
		case err := <-s.hooks:
			if err != nil {
				s.sc.print("⚠ " + displayText(err.Error()))
			}
		case m := <-s.msgs:
			if x := s.turnMsg(m); x != nil {
				return x.code, s.sc.err
			}
		}
		for _, k := range keys {
			if x := s.key(k); x != nil {
				return x.code, s.sc.err
			}
		}
		if s.sc.err != nil {
			return 1, fmt.Errorf("agent-sim: write terminal %s: %w", tty.Name(), s.sc.err)
		}
	}
}

// liveLines is what the bottom of the screen shows in the current mode.
func (s *sim) liveLines() []string {
	switch s.mode {
	case modeTrust:
		return menuLines(trustQuestion, "Yes, proceed", "No, exit", s.sel, s.sc.cols)
	case modeReady:
		return boxLines(s.input, s.sc.cols)
	case modeBusy:
		if s.silent {
			return nil
		}
		return []string{spinnerLine(s.spin, s.sc.cols)}
	case modeAsk:
		if s.keyed {
			return []string{truncate(displayText(s.question), s.sc.cols), truncate(confirmLine, s.sc.cols)}
		}
		return menuLines(s.question, "Yes", "No", s.sel, s.sc.cols)
	case modeBrowse:
		return []string{browseLine}
	}
	return nil
}

func (s *sim) draw() { s.sc.setLive(s.liveLines()) }

// turnMsg handles a message from the running turn.
func (s *sim) turnMsg(m turnMsg) *exitNow {
	if m.turn != s.turnID {
		return nil
	}
	switch m.kind {
	case msgLine:
		s.sc.print(displayText(m.text))
	case msgSilent:
		// silent: the spinner goes (one write), then nothing is written
		// until it ends and the spinner comes back.
		s.silent = m.on
		s.draw()
	case msgAsk:
		s.mode, s.sel, s.question, s.askReply, s.keyed = modeAsk, 0, m.text, m.reply, m.on
		s.draw()
	case msgPanic:
		panic(m.panicked) // re-raised here so Run's deferred restore runs
	case msgDone:
		s.turnCancel()
		s.turnCancel = nil
		s.ticker.Stop()
		switch {
		case m.end.exit:
			s.sc.setLive(nil)
			return &exitNow{m.end.code}
		case m.end.crash:
			s.sc.update(strings.Split(crashText, "\n"), nil)
			return &exitNow{2}
		}
		var end []string
		if m.err != nil {
			end = append(end, "⚠ "+displayText(m.err.Error()))
		}
		s.mode = modeReady
		s.sc.update(append(end, ""), s.liveLines())
		if len(s.opts.Hook) > 0 && !m.end.noHook {
			go func(prompt string, end turnEnd) {
				if end.hookDelay > 0 {
					select {
					case <-time.After(end.hookDelay):
					case <-s.ctx.Done():
						return
					}
				}
				err := runHook(s.ctx, s.opts, prompt, "Stop", end.answer, end.usage)
				select {
				case s.hooks <- err:
				case <-s.ctx.Done():
				}
			}(s.prompt, m.end)
		}
	}
	return nil
}

// tuiTurn is the turnUI of a turn running under the TUI: it forwards to the
// loop, giving up when the turn is cancelled.
type tuiTurn struct {
	id   int
	ctx  context.Context
	msgs chan turnMsg
}

func (t *tuiTurn) send(m turnMsg) bool {
	m.turn = t.id
	select {
	case t.msgs <- m:
		return true
	case <-t.ctx.Done():
		return false
	}
}

func (t *tuiTurn) line(s string)  { t.send(turnMsg{kind: msgLine, text: s}) }
func (t *tuiTurn) silent(on bool) { t.send(turnMsg{kind: msgSilent, on: on}) }

func (t *tuiTurn) ask(ctx context.Context, q string) (bool, error) { return t.question(ctx, q, false) }

func (t *tuiTurn) confirm(ctx context.Context, q string) (bool, error) {
	return t.question(ctx, q, true)
}

// question shows q, with the Yes/No menu or as a confirm (keyed), and
// waits for its answer.
func (t *tuiTurn) question(ctx context.Context, q string, keyed bool) (bool, error) {
	reply := make(chan bool, 1)
	if !t.send(turnMsg{kind: msgAsk, text: q, reply: reply, on: keyed}) {
		return false, ctx.Err()
	}
	select {
	case yes := <-reply:
		return yes, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}
