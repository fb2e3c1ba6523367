package tmuxctl

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/ctxtime"
)

// TimeoutError is returned by a wait whose context deadline passed. It wraps
// ErrTimeout and keeps the tail of the last screen seen, for the user.
type TimeoutError struct {
	Pane  string
	What  string // e.g. "prompt /\$ $/", "idle for 2s"
	After time.Duration
	Tail  string // last lines of the last capture
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("pane %s: timed out after %s waiting for %s", e.Pane, e.After.Round(time.Millisecond), e.What)
}

// Is makes errors.Is(err, ErrTimeout) true.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// waitErr turns a context error during a wait into a TimeoutError (deadline)
// or passes cancellation through.
func waitErr(ctx context.Context, pane, what string, start time.Time, last string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{Pane: pane, What: what, After: clock.Since(start), Tail: lastLines(last, 5)}
	}
	return ctx.Err()
}

// failWait returns the timeout error when err happened because the wait's
// deadline passed, else err.
func failWait(ctx context.Context, err error, pane, what string, start time.Time, last string) error {
	if ctx.Err() != nil {
		return waitErr(ctx, pane, what, start, last)
	}
	return err
}

// markOption is the pane user option where Send-style commands store the
// mark taken just before sending, so a later wait-prompt in another process
// can start from it.
const markOption = "@runner_mark"

// PromptMatch is what WaitPrompt found.
type PromptMatch struct {
	Line    string        `json:"line"`    // the whole line that matched
	Match   string        `json:"match"`   // the matched text
	Elapsed time.Duration `json:"elapsed"` // time waited
}

// WaitPrompt waits until re matches output that appeared after mark (each
// line is tried, then the whole new text for multi-line patterns). Note that
// capture drops trailing spaces, so a prompt "$ " is seen as "$". A pane
// that dies or vanishes ends the wait with an error.
func (c *Client) WaitPrompt(ctx context.Context, pane string, re *regexp.Regexp, mark Mark) (PromptMatch, error) {
	start := clock.Now()
	what := "prompt /" + re.String() + "/"
	var last string
	for poll := 10 * time.Millisecond; ; poll = min(poll*2, 200*time.Millisecond) {
		out, err := c.NewOutput(ctx, pane, mark)
		if err != nil {
			if ctx.Err() != nil {
				return PromptMatch{}, waitErr(ctx, pane, what, start, last)
			}
			return PromptMatch{}, err
		}
		last = out
		for _, line := range strings.Split(out, "\n") {
			if loc := re.FindStringIndex(line); loc != nil {
				return PromptMatch{Line: line, Match: line[loc[0]:loc[1]], Elapsed: clock.Since(start)}, nil
			}
		}
		if m := re.FindString(out); m != "" {
			return PromptMatch{Line: m, Match: m, Elapsed: clock.Since(start)}, nil
		}
		if p, err := c.Pane(ctx, pane); err == nil && p.Dead {
			return PromptMatch{}, &DeadError{Pane: pane, Status: p.DeadStatus}
		}
		if err := ctxtime.Sleep(ctx, poll); err != nil {
			return PromptMatch{}, waitErr(ctx, pane, what, start, last)
		}
	}
}

// IdleOptions controls WaitIdle.
type IdleOptions struct {
	Quiet time.Duration    // how long the screen must stay unchanged (default 2 s)
	Masks []*regexp.Regexp // volatile parts (clocks, timers) removed before hashing
	// ActivityFile is a file the pane's output is appended to (its
	// pipe-pane transcript). Writes to it wake the wait up; without one the
	// screen is polled. If empty, the pane option @runner_transcript is
	// used, and with AutoPipe a temporary pipe-pane is opened when the pane
	// has none.
	ActivityFile string
	AutoPipe     bool
	// Poll is the capture interval when there is no activity file
	// (default Quiet/4, at most 250 ms).
	Poll time.Duration
	// Liveness is how often a quiet pane is checked for death (default 1 s).
	Liveness time.Duration
}

// TranscriptOption is the pane user option naming the file its output is
// piped to (set by whoever started the pipe), used by WaitIdle.
const TranscriptOption = "@runner_transcript"

// IdleResult is what WaitIdle saw.
type IdleResult struct {
	Screen   string        `json:"screen"`   // the stable screen
	Hash     string        `json:"hash"`     // its masked hash
	Elapsed  time.Duration `json:"elapsed"`  // total wait
	Captures int           `json:"captures"` // screens captured
	Source   string        `json:"source"`   // "pipe" or "poll"
}

// ScreenHash hashes a screen after removing every match of masks.
func ScreenHash(screen string, masks []*regexp.Regexp) string {
	for _, m := range masks {
		screen = m.ReplaceAllString(screen, "")
	}
	h := fnv.New64a()
	h.Write([]byte(screen))
	return strconv.FormatUint(h.Sum64(), 16)
}

// WaitIdle waits until the pane's visible screen (with masks applied) has not
// changed for opts.Quiet. Output activity (writes to the pane's transcript)
// triggers captures, so a quiet pane is not re-captured in a loop; without an
// activity file the screen is polled. A dead or missing pane, or a failed
// capture, ends the wait with an error: never "idle".
func (c *Client) WaitIdle(ctx context.Context, pane string, opts IdleOptions) (IdleResult, error) {
	start := clock.Now()
	quiet := opts.Quiet
	if quiet <= 0 {
		quiet = 2 * time.Second
	}
	what := fmt.Sprintf("idle (no change for %s)", quiet)
	res := IdleResult{Source: "poll"}

	p, err := c.alive(ctx, pane)
	if err != nil {
		return res, failWait(ctx, err, pane, what, start, "")
	}
	file, events, cleanup, err := c.watchActivity(ctx, pane, p, opts)
	if err != nil {
		return res, failWait(ctx, err, pane, what, start, "")
	}
	defer cleanup()
	if events != nil {
		res.Source = "pipe"
	}
	poll := opts.Poll
	if poll <= 0 {
		poll = min(quiet/4, 250*time.Millisecond)
	}
	liveness := opts.Liveness
	if liveness <= 0 {
		liveness = time.Second
	}

	w := &idleWait{c: c, pane: pane, masks: opts.Masks, quiet: quiet, poll: poll, liveness: liveness, res: &res}
	if err := w.capture(ctx); err != nil {
		return res, failWait(ctx, err, pane, what, start, "")
	}
	timer := time.NewTimer(quiet)
	defer timer.Stop()
	for {
		timer.Reset(max(clock.Until(w.next(events != nil)), 0))
		select {
		case <-ctx.Done():
			return res, waitErr(ctx, pane, what, start, w.screen)
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Name == file && ev.Op&(fsnotify.Write|fsnotify.Create) != 0 {
				w.dirty = true
			}
			continue
		case <-timer.C:
		}
		done, err := w.tick(ctx, events != nil)
		if err != nil {
			return res, failWait(ctx, err, pane, what, start, w.screen)
		}
		if done {
			res.Screen, res.Hash, res.Elapsed = w.screen, w.hash, clock.Since(start)
			return res, nil
		}
	}
}

// idleWaitDebounce is how long WaitIdle lets activity gather before it
// captures.
const idleWaitDebounce = 20 * time.Millisecond

// idleWait is the state of one WaitIdle: the last screen and when it
// changed, was captured and was seen alive.
type idleWait struct {
	c                                  *Client
	pane                               string
	masks                              []*regexp.Regexp
	quiet, poll, liveness              time.Duration
	res                                *IdleResult
	screen, hash                       string
	lastChange, lastCapture, lastAlive time.Time
	// dirty means activity arrived that has not been captured yet.
	dirty bool
}

// capture takes the screen; a new hash restarts the quiet time.
func (w *idleWait) capture(ctx context.Context) error {
	w.res.Captures++
	s, err := w.c.CaptureScreen(ctx, w.pane)
	if err != nil {
		return err
	}
	now := clock.Now()
	w.screen, w.lastCapture, w.dirty = s, now, false
	if h := ScreenHash(s, w.masks); h != w.hash || w.lastChange.IsZero() {
		w.hash, w.lastChange = h, now
	}
	if w.lastAlive.IsZero() {
		w.lastAlive = now
	}
	return nil
}

// next is when the wait must look again: the end of the quiet time, the
// next poll (without activity events), the debounced capture of new
// activity, the next liveness check.
func (w *idleWait) next(events bool) time.Time {
	next := w.lastChange.Add(w.quiet)
	if !events {
		next = minTime(next, w.lastCapture.Add(w.poll))
	}
	if w.dirty {
		next = minTime(next, w.lastCapture.Add(idleWaitDebounce))
	}
	return minTime(next, w.lastAlive.Add(w.liveness))
}

// tick checks liveness when due and captures when due; done means the
// screen stayed the same for the quiet time (and the pane is alive).
func (w *idleWait) tick(ctx context.Context, events bool) (done bool, err error) {
	now := clock.Now()
	if now.Sub(w.lastAlive) >= w.liveness {
		if _, err := w.c.recentPane(ctx, w.pane, w.liveness); err != nil {
			return false, err
		}
		w.lastAlive = now
	}
	if !w.dirty && events && now.Sub(w.lastChange) < w.quiet {
		return false, nil
	}
	if w.dirty && now.Sub(w.lastCapture) < idleWaitDebounce && now.Sub(w.lastChange) < w.quiet {
		return false, nil
	}
	if err := w.capture(ctx); err != nil {
		return false, err
	}
	if w.lastCapture.Sub(w.lastChange) < w.quiet {
		return false, nil
	}
	_, err = w.c.alive(ctx, w.pane)
	return err == nil, err
}

// watchActivity finds the pane's activity file (opts.ActivityFile, the
// pane's transcript, or with opts.AutoPipe a pipe of its own into a
// private directory, so the watch sees only this pane's writes) and
// watches it. No file, or a watch that fails, gives no events: the caller
// polls. cleanup stops what it started.
func (c *Client) watchActivity(ctx context.Context, pane string, p PaneInfo, opts IdleOptions) (file string, events <-chan fsnotify.Event, cleanup func(), err error) {
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if c.Remote() {
		return "", nil, cleanup, nil // its files are not here: poll the screen
	}
	file = opts.ActivityFile
	if file == "" && p.Pipe {
		file, _ = c.ShowOption(ctx, pane, TranscriptOption)
	}
	if file == "" && !p.Pipe && opts.AutoPipe {
		dir, err := os.MkdirTemp("", "runner-activity-*")
		if err != nil {
			return "", nil, cleanup, fmt.Errorf("wait idle on %s: %w", pane, err)
		}
		undo = append(undo, func() { os.RemoveAll(dir) })
		file = filepath.Join(dir, "output")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			cleanup()
			return "", nil, func() {}, fmt.Errorf("wait idle on %s: %w", pane, err)
		}
		if err := c.PipePane(ctx, pane, file); err != nil {
			cleanup()
			return "", nil, func() {}, c.deadOr(ctx, pane, err)
		}
		undo = append(undo, func() { _ = c.StopPipe(context.WithoutCancel(ctx), pane) })
	}
	if file != "" {
		if w, err := fsnotify.NewWatcher(); err == nil {
			undo = append(undo, func() { w.Close() })
			if err := w.Add(filepath.Dir(file)); err == nil {
				events = w.Events
			}
		}
	}
	return file, events, cleanup, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// IsShell reports whether a pane's current command is a shell (the
// commands that count as "at a shell").
func IsShell(cmd string) bool {
	switch strings.TrimPrefix(cmd, "-") {
	case "bash", "sh", "dash", "zsh", "fish", "ksh", "mksh", "ash", "busybox":
		return true
	}
	return false
}

// WaitShellPrompt waits until the pane's foreground process is a shell and
// its screen has been stable for quiet (default 100 ms): the shell is reading
// a command line.
func (c *Client) WaitShellPrompt(ctx context.Context, pane string, quiet time.Duration) (PaneInfo, error) {
	if quiet <= 0 {
		quiet = 100 * time.Millisecond
	}
	start := clock.Now()
	var last, lastHash string
	var stableSince time.Time
	for poll := 10 * time.Millisecond; ; poll = min(poll*2, 100*time.Millisecond) {
		p, err := c.alive(ctx, pane)
		if err != nil {
			if ctx.Err() != nil {
				return p, waitErr(ctx, pane, "a shell prompt", start, last)
			}
			return p, err
		}
		if IsShell(p.CurrentCommand) {
			s, err := c.CaptureScreen(ctx, pane)
			if err != nil {
				if ctx.Err() != nil {
					return p, waitErr(ctx, pane, "a shell prompt", start, last)
				}
				return p, err
			}
			last = s
			h := ScreenHash(s, nil)
			if h != lastHash || stableSince.IsZero() {
				lastHash, stableSince = h, clock.Now()
			} else if clock.Since(stableSince) >= quiet {
				return p, nil
			}
		} else {
			stableSince = time.Time{}
		}
		if err := ctxtime.Sleep(ctx, poll); err != nil {
			return PaneInfo{}, waitErr(ctx, pane, "a shell prompt", start, last)
		}
	}
}
