package tmuxctl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/ctxtime"
	"github.com/runner-cli/runner/internal/textutil"
)

// DefaultEnterDelay is the pause between pasting text and pressing Enter.
// Some agents (Codex) treat an Enter that follows a paste burst within
// ~120 ms as a newline, so the default leaves a margin.
const DefaultEnterDelay = 150 * time.Millisecond

// ErrPaneInMode is wrapped when text would go to a pane in copy mode (where
// Enter means "copy", not "submit").
var ErrPaneInMode = errors.New("pane is in copy mode")

// namedKey reports whether s is a tmux key name accepted by SendKeys
// (modifiers C-, M-, S- may prefix any of them or a single character). A
// switch, not a package-level map built in every process's init.
func namedKey(s string) bool {
	switch s {
	case "Enter", "Escape", "Tab", "BTab", "Space", "BSpace",
		"Up", "Down", "Left", "Right", "Home", "End",
		"PageUp", "PageDown", "PgUp", "PgDn", "PPage", "NPage",
		"IC", "DC", "Insert", "Delete",
		"KP0", "KP1", "KP2", "KP3", "KP4", "KP5", "KP6",
		"KP7", "KP8", "KP9", "KPEnter":
		return true
	}
	return false
}

var fnKey = textutil.LazyRegexp(`^F([1-9]|1[0-2])$`)

// ValidKey reports whether k is a key SendKeys accepts: a tmux key name
// (Enter, Escape, Up, F5, …), a single character, either optionally with
// C-, M- or S- modifiers (C-c, M-Enter, C-S-Up).
func ValidKey(k string) bool {
	base := k
	for {
		if len(base) > 2 && (strings.HasPrefix(base, "C-") || strings.HasPrefix(base, "M-") || strings.HasPrefix(base, "S-")) {
			base = base[2:]
			continue
		}
		break
	}
	if namedKey(base) || fnKey.Re().MatchString(base) {
		return true
	}
	r := []rune(base)
	return len(r) == 1 && r[0] > 0x20 && r[0] != 0x7f
}

// SendKeys sends named keys (see ValidKey) to the pane. It never sends text:
// an unknown key name is an error, so "Enter" typed as a word can never be
// confused with the key. Use Paste or Send for text.
func (c *Client) SendKeys(ctx context.Context, pane string, keys ...string) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	for _, k := range keys {
		if !ValidKey(k) {
			return fmt.Errorf("send keys to %s: %q is not a key name (use Enter, Escape, C-c, Up, F1…, or one character; send text with 'runner tmux send'): %w", pane, k, ErrBadKey)
		}
	}
	args := []string{"send-keys", "-t", pane}
	for _, k := range keys {
		if k == ";" {
			k = `\;`
		}
		args = append(args, k)
	}
	if _, err := c.run(ctx, nil, args...); err != nil {
		return fmt.Errorf("send keys to %s: %w", pane, err)
	}
	return nil
}

// ErrBadKey is wrapped when a key name is not recognised.
var ErrBadKey = errors.New("bad key name")

// PasteText returns text as Paste delivers it: without the bytes that
// would act as keys in the pane — ESC (a text holding ESC[201~ would end
// the bracketed paste, and the rest arrive as keystrokes: Shift-Tab, Esc,
// Enter), the other C0 controls but tab and newline (CR is Enter, ^C an
// interrupt), DEL (Backspace) and the C1 controls (U+0080–U+009F) — and
// how many it removed. Every other byte is kept as it is, invalid UTF-8
// included.
func PasteText(text string) (clean string, removed int) {
	keep := func(r rune) bool { return r == '\t' || r == '\n' || r >= 0x20 && r != 0x7f && (r < 0x80 || r >= 0xa0) }
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !keep(r) && !(r == utf8.RuneError && size == 1) {
			break
		}
		i += size
	}
	if i == len(text) {
		return text, 0
	}
	var b strings.Builder
	b.Grow(len(text))
	b.WriteString(text[:i])
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if keep(r) || r == utf8.RuneError && size == 1 {
			b.WriteString(text[i : i+size])
		} else {
			removed++
		}
		i += size
	}
	return b.String(), removed
}

// Paste delivers text to the pane: it is loaded into a uniquely named
// buffer through stdin (never as an argument) and pasted with paste-buffer
// -d -p, which wraps it in bracketed-paste markers when the application
// enabled them. It is byte-exact but for the bytes that would act as keys,
// which are removed (PasteText; callers say so). raw (-r) keeps LF as LF;
// otherwise tmux turns each LF into CR, as a terminal paste would.
func (c *Client) Paste(ctx context.Context, pane, text string, raw bool) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	text, _ = PasteText(text)
	if text == "" {
		return nil
	}
	buf := c.nextBufferName()
	if _, err := c.run(ctx, strings.NewReader(text), "load-buffer", "-b", buf, "-"); err != nil {
		return fmt.Errorf("paste into %s: load buffer: %w", pane, err)
	}
	return c.pasteBuffer(ctx, pane, buf, raw)
}

// pasteBuffer pastes the loaded buffer buf into the pane and deletes it
// ("": nothing to paste). A buffer that could not be pasted is deleted
// all the same: the text is not left behind.
func (c *Client) pasteBuffer(ctx context.Context, pane, buf string, raw bool) error {
	if buf == "" {
		return nil
	}
	args := []string{"paste-buffer", "-d", "-p", "-b", buf, "-t", pane}
	if raw {
		args = append(args, "-r")
	}
	if _, err := c.run(ctx, nil, args...); err != nil {
		_, _ = c.run(context.WithoutCancel(ctx), nil, "delete-buffer", "-b", buf)
		return fmt.Errorf("paste into %s: %w", pane, err)
	}
	return nil
}

// SendOptions controls Send.
type SendOptions struct {
	Enter      bool          // press Enter after the text
	EnterDelay time.Duration // pause before Enter (0 means DefaultEnterDelay; negative means none)
	Raw        bool          // paste LF as LF (paste-buffer -r)
	LeaveMode  bool          // leave copy mode instead of failing with ErrPaneInMode
}

// Send checks that the pane is alive and not in copy mode, pastes text, and
// presses Enter after the delay if asked.
func (c *Client) Send(ctx context.Context, pane, text string, opts SendOptions) error {
	if err := c.ready(ctx, pane, opts.LeaveMode); err != nil {
		return err
	}
	if err := c.Paste(ctx, pane, text, opts.Raw); err != nil {
		return err
	}
	if !opts.Enter {
		return nil
	}
	if err := ctxtime.Sleep(ctx, enterDelay(opts.EnterDelay)); err != nil {
		return err
	}
	return c.SendKeys(ctx, pane, "Enter")
}

func enterDelay(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultEnterDelay
	case d < 0:
		return 0
	}
	return d
}

// ready fails unless the pane exists, is alive and is not in a mode; with
// leaveMode it cancels copy mode instead.
func (c *Client) ready(ctx context.Context, pane string, leaveMode bool) error {
	p, err := c.Pane(ctx, pane)
	if err != nil {
		return err
	}
	return c.readyAs(ctx, pane, p, leaveMode)
}

// readyAs is ready on the pane's information p, read by the caller.
func (c *Client) readyAs(ctx context.Context, pane string, p PaneInfo, leaveMode bool) error {
	if p.Dead {
		return &DeadError{Pane: pane, Status: p.DeadStatus}
	}
	if p.InMode {
		if !leaveMode {
			return fmt.Errorf("pane %s: %w (leave it with q)", pane, ErrPaneInMode)
		}
		if _, err := c.run(ctx, nil, "send-keys", "-t", pane, "-X", "cancel"); err != nil {
			return fmt.Errorf("pane %s: leave copy mode: %w", pane, err)
		}
	}
	return nil
}

// DeliverOptions controls Deliver.
type DeliverOptions struct {
	EnterDelay time.Duration // pause between paste and Enter (0: default)
	Raw        bool          // paste-buffer -r
	LeaveMode  bool          // leave copy mode instead of failing
	// Nudges is how many extra Enters may be sent when the first one shows no
	// effect (default 2; negative means none). The text is never pasted twice.
	Nudges int
	// NudgeAfter is how long to wait for an effect before nudging (default
	// 1 s). A long text gets more: the time the application needs to read
	// it at DeliverBytesPerSecond is added.
	NudgeAfter time.Duration
	// Accepted, if set, decides from a screen captured after Enter whether
	// the text was submitted (e.g. a busy marker appeared, the composer is
	// empty). If nil, any change from the screen captured just before Enter
	// counts as accepted.
	Accepted func(screen string) bool
	// Taken, if set, is asked before each look after an Enter: true when
	// the caller knows, without a screen, that the text was taken (the
	// agent's hook said its turn ended): the delivery is confirmed with
	// no capture. Only with Accepted.
	Taken func() bool
	// TakenWithin is how long the first look after an Enter waits for
	// Taken, once the pane wrote (the agent read the key): a quick turn's
	// hook usually comes within a few milliseconds of that, and then no
	// look is taken at all (a tmux client, and the capture, on a machine
	// where the agent and its hook want the CPU). 0: no wait. Only with
	// Taken.
	TakenWithin time.Duration
	// NudgeIf, if set, is asked before each extra Enter with a fresh
	// screen: no nudge unless it says so (e.g. the text still sits in the
	// composer). An Enter is never sent blind onto a dialog that appeared
	// meanwhile.
	NudgeIf func(screen string) bool
	// Wake, if set, cuts the wait between two looks after Enter short
	// when it receives (e.g. the agent's hook events file was written:
	// Accepted may now say yes without waiting out the poll).
	Wake <-chan struct{}
	// Before, if set, is handed the screen as it was just before the
	// paste, captured in the same tmux call as the check that the pane
	// lives and takes keys (what Accepted compares against).
	Before func(screen string)
}

// DeliverBytesPerSecond is the slowest rate at which an application in a
// pane is expected to read a pasted text. paste-buffer returns as soon as
// tmux has queued the text; the application reads it, and the Enter queued
// after it, at its own pace (bash's readline takes 17 s for 1 MiB on an
// idle machine, ~60 KiB/s, and 37 s on a loaded one, ~28 KiB/s; the
// simulated agent under 2 s), so the wait for a sign that the text was
// taken grows with its size. The rate leaves a margin of three over the
// loaded measurement; the wait ends as soon as the sign shows, so only a
// prompt that was really lost costs the whole of it.
const DeliverBytesPerSecond = 8 << 10

// ReadTime is how long an application may take to read n pasted bytes (at
// DeliverBytesPerSecond).
func ReadTime(n int) time.Duration {
	return time.Duration(int64(n) * int64(time.Second) / DeliverBytesPerSecond)
}

// Delivery reports how a Deliver went.
type Delivery struct {
	Confirmed bool          `json:"confirmed"`
	Enters    int           `json:"enters"` // Enter presses, including nudges
	Elapsed   time.Duration `json:"elapsed_ns"`
	Reason    string        `json:"reason"`
	// Removed counts the bytes of the text that would have acted as keys
	// and were not pasted (PasteText).
	Removed int `json:"removed,omitempty"`
}

// Deliver pastes text once, presses Enter after the delay, and confirms the
// submission from the screen, nudging Enter a bounded number of times when
// nothing happened. It returns the outcome even when not confirmed; the error
// is for failures (dead pane, tmux error, context).
func (c *Client) Deliver(ctx context.Context, pane, text string, opts DeliverOptions) (Delivery, error) {
	start := clock.Now()
	var d Delivery
	_, d.Removed = PasteText(text)
	nudges, after := opts.nudges(), opts.nudgeAfter(len(text))
	// Only what the pane writes from the paste on wakes the first look
	// after an Enter sent with it.
	drain(opts.Wake)
	entered, err := c.pasteWhenReady(ctx, pane, text, opts)
	if err != nil {
		return d, err
	}
	if !entered {
		if err := ctxtime.Sleep(ctx, enterDelay(opts.EnterDelay)); err != nil {
			return d, err
		}
	}
	accepted, err := c.acceptance(ctx, pane, opts.Accepted)
	if err != nil {
		return d, err
	}
	for attempt := 0; attempt <= nudges; attempt++ {
		if attempt > 0 && opts.NudgeIf != nil {
			if done, err := c.lookBeforeNudge(ctx, pane, accepted, opts.NudgeIf, start, &d); done || err != nil {
				return d, err
			}
		}
		if attempt > 0 || !entered {
			// What the pane wrote before this Enter (the paste's echo) is
			// no sign of it: only a write after it wakes the first look.
			drain(opts.Wake)
			if err := c.SendKeys(ctx, pane, "Enter"); err != nil {
				return d, err
			}
		}
		d.Enters++
		if done, err := c.watchEnter(ctx, pane, after, accepted, opts.Accepted != nil, opts.taken(), opts.TakenWithin, opts.Wake, start, &d); done || err != nil {
			return d, err
		}
	}
	d.Elapsed = clock.Since(start)
	d.Reason = fmt.Sprintf("no effect seen after %d Enter presses", d.Enters)
	return d, nil
}

// taken is the caller's own check (DeliverOptions.Taken), when it has
// one and a screen check; nil otherwise.
func (o DeliverOptions) taken() func() bool {
	if o.Accepted == nil {
		return nil
	}
	return o.Taken
}

// nudges is how many extra Enters Deliver may press: Nudges, with zero
// meaning the default of 2 and a negative count none.
func (o DeliverOptions) nudges() int {
	switch {
	case o.Nudges == 0:
		return 2
	case o.Nudges < 0:
		return 0
	}
	return o.Nudges
}

// nudgeAfter is how long Deliver waits for an effect of an Enter before
// nudging: NudgeAfter (default 1 s) plus the time an application needs to
// read a text of n bytes, so a long paste is not nudged while being read.
func (o DeliverOptions) nudgeAfter(n int) time.Duration {
	after := o.NudgeAfter
	if after <= 0 {
		after = time.Second
	}
	return after + ReadTime(n)
}

// EnterWithPaste is the longest Enter delay (DeliverOptions.EnterDelay)
// that Deliver keeps by sending the first Enter in the paste's own tmux
// call, right behind the text, when the caller checks the screen itself
// (DeliverOptions.Accepted, Before): an application whose profile asks
// for no more reads a paste and the Enter after it in order, however
// close together.
const EnterWithPaste = time.Millisecond

// pasteWhenReady pastes text once the pane is known to live and take
// keys. With opts.Before, the look, the loading of the text into a buffer
// and its paste (when the pane takes keys: the usual case) are one tmux
// call, and Before gets the screen just before the paste; a pane that did
// not take it is dealt with as it was found, and the buffer deleted if
// the pane turns out not to take it at all. entered: the first Enter went
// with the paste, in that call (an Enter delay of at most EnterWithPaste).
func (c *Client) pasteWhenReady(ctx context.Context, pane, text string, opts DeliverOptions) (entered bool, err error) {
	if opts.Before == nil {
		if err := c.ready(ctx, pane, opts.LeaveMode); err != nil {
			return false, err
		}
		return false, c.Paste(ctx, pane, text, opts.Raw)
	}
	// Only a caller's check tells the text taken from the text waiting
	// (without one, a change from the screen just before Enter is the
	// sign, and that screen is looked at between the paste and Enter).
	enter := enterDelay(opts.EnterDelay) <= EnterWithPaste && opts.Accepted != nil
	p, screen, buf, pasted, err := c.paneScreenPasting(ctx, pane, text, opts.Raw, enter)
	if err != nil {
		return false, err
	}
	if pasted {
		opts.Before(screen)
		return enter, nil
	}
	err = c.readyAs(ctx, pane, p, opts.LeaveMode)
	if err == nil && p.InMode { // the screen of copy mode: look again without it
		screen, err = c.CaptureScreen(ctx, pane)
	}
	if err == nil {
		opts.Before(screen)
		err = c.pasteBuffer(ctx, pane, buf, opts.Raw)
	} else if buf != "" {
		_, _ = c.run(context.WithoutCancel(ctx), nil, "delete-buffer", "-b", buf)
	}
	return false, err
}

// acceptance is the check that the text was taken: the caller's, or,
// without one, any change from the screen captured now, just before
// Enter.
func (c *Client) acceptance(ctx context.Context, pane string, accepted func(string) bool) (func(string) bool, error) {
	if accepted != nil {
		return accepted, nil
	}
	before, err := c.CaptureScreen(ctx, pane)
	if err != nil {
		return nil, err
	}
	return func(s string) bool { return s != before }, nil
}

// lookBeforeNudge looks at the pane before an extra Enter: the text may
// have been taken meanwhile (confirmed), or the screen may not show it
// waiting (no nudge: an Enter is never sent blind onto what appeared).
// done reports that d is settled.
func (c *Client) lookBeforeNudge(ctx context.Context, pane string, accepted, nudgeIf func(string) bool, start time.Time, d *Delivery) (done bool, err error) {
	_, screen, err := c.PaneScreen(ctx, pane)
	if err != nil {
		return true, err
	}
	if accepted(screen) {
		d.Confirmed, d.Elapsed = true, clock.Since(start)
		d.Reason = fmt.Sprintf("accepted by the screen check (after %d nudges)", d.Enters-1)
		return true, nil
	}
	if !nudgeIf(screen) {
		d.Elapsed = clock.Since(start)
		d.Reason = fmt.Sprintf("no effect seen after %d Enter presses; no nudge: the screen does not show the text waiting", d.Enters)
		return true, nil
	}
	return false, nil
}

// watchEnter looks at the pane after an Enter, for up to after, until
// accepted says the text was taken (or the program exited), or, before a
// look, taken (the caller's check without a screen; nil: none) says so;
// done reports that d is settled.
func (c *Client) watchEnter(ctx context.Context, pane string, after time.Duration, accepted func(string) bool, callerCheck bool, taken func() bool, within time.Duration, wake <-chan struct{}, start time.Time, d *Delivery) (done bool, err error) {
	deadline := clock.Now().Add(after)
	if wake != nil {
		// The first look waits for the pane's first write after Enter
		// (or a poll interval): at once, it would come before the
		// application has read the key.
		if err := sleepOrWake(ctx, 10*time.Millisecond, wake); err != nil {
			return true, err
		}
		if err := awaitTaken(ctx, taken, within, wake); err != nil {
			return true, err
		}
	}
	for poll := 10 * time.Millisecond; ; poll = min(poll*2, 100*time.Millisecond) {
		lookedAt := clock.Now()
		if taken != nil && taken() {
			d.Confirmed, d.Elapsed = true, clock.Since(start)
			d.Reason = "taken, by the caller's sign (no screen needed)"
			if d.Enters > 1 {
				d.Reason += fmt.Sprintf(" (after %d nudges)", d.Enters-1)
			}
			return true, nil
		}
		info, screen, byCaller, pending, err := c.lookUnlessTaken(ctx, pane, taken, wake)
		if err != nil {
			return true, err
		}
		if byCaller {
			d.Confirmed, d.Elapsed = true, clock.Since(start)
			d.Reason = "taken, by the caller's sign (no screen needed)"
			if d.Enters > 1 {
				d.Reason += fmt.Sprintf(" (after %d nudges)", d.Enters-1)
			}
			return true, nil
		}
		if info.Dead {
			// The program exited after Enter: the text was submitted (and
			// the caller's monitoring sees the death).
			d.Elapsed = clock.Since(start)
			d.Confirmed, d.Reason = true, "the program exited after Enter"
			return true, nil
		}
		if accepted(screen) {
			d.Confirmed = true
			d.Elapsed = clock.Since(start)
			d.Reason = "screen changed after Enter"
			if callerCheck {
				d.Reason = "accepted by the screen check"
			}
			if d.Enters > 1 {
				d.Reason += fmt.Sprintf(" (after %d nudges)", d.Enters-1)
			}
			return true, nil
		}
		if clock.Now().After(deadline) {
			return false, nil
		}
		if !pending {
			if err := sleepOrWake(ctx, poll, wake); err != nil {
				return true, err
			}
		}
		// Woken early: still no more than two looks per poll interval, so
		// a pane that writes all the time (a long paste being read) is
		// looked at about as often as without wakes.
		if gap := poll/2 - clock.Since(lookedAt); gap > 0 {
			if err := ctxtime.Sleep(ctx, gap); err != nil {
				return true, err
			}
		}
	}
}

// awaitTaken waits up to within, woken by wake, for taken to say yes
// (DeliverOptions.TakenWithin); the look that follows asks it again.
func awaitTaken(ctx context.Context, taken func() bool, within time.Duration, wake <-chan struct{}) error {
	if taken == nil || within <= 0 {
		return nil
	}
	until := clock.Now().Add(within)
	for !taken() {
		left := clock.Until(until)
		if left <= 0 {
			return nil
		}
		if err := sleepOrWake(ctx, left, wake); err != nil {
			return err
		}
	}
	return nil
}

// lookUnlessTaken is watchEnter's look at the pane (PaneScreen), cut
// short by the caller's sign: a wake during the look after which taken
// says yes ends it at once, the look's tmux client stopped (byCaller: the
// text taken, no screen). A wake after which it says no leaves the look
// to finish, and is pending: the next look comes without a wait for one.
// Without taken or wake it is PaneScreen.
func (c *Client) lookUnlessTaken(ctx context.Context, pane string, taken func() bool, wake <-chan struct{}) (info PaneInfo, screen string, byCaller, pending bool, err error) {
	if taken == nil || wake == nil {
		info, screen, err = c.PaneScreen(ctx, pane)
		return info, screen, false, false, err
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type look struct {
		info   PaneInfo
		screen string
		err    error
	}
	done := make(chan look, 1)
	go func() {
		i, s, e := c.PaneScreen(lctx, pane)
		done <- look{i, s, e}
	}()
	for {
		select {
		case l := <-done:
			return l.info, l.screen, false, pending, l.err
		case <-wake:
			if taken() {
				return PaneInfo{}, "", true, false, nil
			}
			pending = true
		}
	}
}

// drain empties wake (nil: nothing to do).
func drain(wake <-chan struct{}) {
	for {
		select {
		case <-wake:
		default:
			return
		}
	}
}

// sleepOrWake waits d, less when wake receives, or until ctx ends (its
// error).
func sleepOrWake(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	if wake == nil {
		return ctxtime.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	case <-wake:
	}
	return nil
}
