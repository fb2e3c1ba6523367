// Creating sessions and windows: sizes, names, the command and its
// environment, the transcript pipe.

package tmuxctl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Size is a terminal size in cells.
type Size struct{ Width, Height int }

// DefaultSize is used when a session is created without an explicit size.
var DefaultSize = Size{Width: 200, Height: 50}

// ParseSize parses "WIDTHxHEIGHT", e.g. "120x40".
func ParseSize(s string) (Size, error) {
	w, h, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
	if ok {
		wi, err1 := strconv.Atoi(w)
		hi, err2 := strconv.Atoi(h)
		if err1 == nil && err2 == nil && wi >= 10 && hi >= 2 && wi <= 10000 && hi <= 10000 {
			return Size{wi, hi}, nil
		}
	}
	return Size{}, fmt.Errorf("size %q: want WIDTHxHEIGHT with width 10..10000 and height 2..10000, e.g. 120x40", s)
}

// String formats the size as WIDTHxHEIGHT.
func (s Size) String() string { return fmt.Sprintf("%dx%d", s.Width, s.Height) }

// ValidateSessionName checks a session or window name: tmux reserves ':' and
// '.' in targets (and silently rewrites them), so they are refused, as are
// empty names and control characters.
func ValidateSessionName(name string) error {
	if name == "" {
		return errors.New("name is empty")
	}
	if len(name) > 200 {
		return fmt.Errorf("name %.20q…: longer than 200 bytes", name)
	}
	for _, r := range name {
		if r == ':' || r == '.' || r < 0x20 || r == 0x7f {
			return fmt.Errorf("name %q: must not contain ':', '.' or control characters", name)
		}
	}
	return nil
}

// SessionTarget returns the exact-match target for a session name.
func SessionTarget(name string) string { return "=" + name }

// WindowTarget returns the exact-match target for the window named name
// in session (for a command that acts on a pane: its active pane).
func WindowTarget(session, name string) string { return SessionTarget(session) + ":=" + name }

// WindowSpec describes a new window (and its first pane).
type WindowSpec struct {
	Session string // session name (created if NewSession is used)
	Name    string // window name (optional)
	Cwd     string // start directory (optional)
	// Env are K=V pairs set in the pane's environment. They are handed
	// over through a 0600 file that the pane's first program (/bin/sh,
	// running a constant script) reads, removes and execs Argv from: no
	// value is ever on a command line, tmux's or any other.
	Env  []string
	Argv []string // command as argv; empty means tmux's default shell ($SHELL when Env is set)
	Size Size     // session size, used only when a session is created
	// RemainOnExit keeps the pane after its process exits, so its exit
	// status can be read (#{pane_dead_status}). It is set as the server's
	// global window option in the same tmux invocation that creates the
	// pane, so even a process that exits at once is kept.
	RemainOnExit bool
	// PipeTo, if set, appends the pane's output to this file from its very
	// first byte: pipe-pane runs in the same tmux invocation that creates
	// the window (which needs Name), before the server reads any output.
	PipeTo string
	// Then are tmux commands run in the same invocation, right after the
	// window is made (and its pipe started), each argument escaped with
	// Arg as Batch does: hooks and options in place before the pane's
	// process can exit, at no extra call. They name the new window as
	// WindowTarget(Session, Name) (which needs Name); a failed one fails
	// the launch, whose window is then left to the caller to close.
	Then [][]string
}

// thenArgs returns the command-sequence tail of Then.
func (s WindowSpec) thenArgs() []string {
	var args []string
	for _, cmd := range s.Then {
		args = append(args, ";")
		for _, a := range cmd {
			args = append(args, Arg(a))
		}
	}
	return args
}

// pipeArgs returns the command-sequence tail that starts the pipe.
func (s WindowSpec) pipeArgs() []string {
	if s.PipeTo == "" || s.Name == "" {
		return nil
	}
	return []string{";", "pipe-pane", "-o", "-t", Arg(WindowTarget(s.Session, s.Name)), Arg(EscapeFormat("exec cat >> " + ShellQuote(s.PipeTo)))}
}

func (s WindowSpec) commonArgs() ([]string, error) {
	var args []string
	if s.Name != "" {
		if err := ValidateSessionName(s.Name); err != nil {
			return nil, fmt.Errorf("window %w", err)
		}
		args = append(args, "-n", Arg(EscapeFormat(s.Name)))
	}
	if s.Cwd != "" {
		args = append(args, "-c", Arg(EscapeFormat(s.Cwd)))
	}
	return args, nil
}

// argvArgs turns an argv into tmux's trailing command arguments. tmux runs a
// single argument through "sh -c"; several arguments are executed directly.
// A one-element argv is therefore run through env(1), so no shell ever sees it.
func argvArgs(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	if len(argv) == 1 {
		argv = []string{"env", "--", argv[0]}
	}
	out := []string{"--"}
	for _, a := range argv {
		out = append(out, Arg(a))
	}
	return out
}

// paneIDFormat is what new-session and new-window print: the new pane and
// the server's pid (see ServerPID), read by c.newPane.
const paneIDFormat = "#{pane_id} #{pid}"

// newPane reads paneIDFormat's output: the pane's id, and the server's pid
// kept for ServerPID.
func (c *Client) newPane(out string) string {
	pane, pid, _ := strings.Cut(strings.TrimSpace(out), " ")
	if n, err := strconv.Atoi(pid); err == nil && n > 0 && c.tr == nil {
		c.launchedOn.Store(int64(n))
	}
	return pane
}

// NewSession creates a detached session with one window and returns its pane.
func (c *Client) NewSession(ctx context.Context, spec WindowSpec) (string, error) {
	if err := ValidateSessionName(spec.Session); err != nil {
		return "", fmt.Errorf("new session: session %w", err)
	}
	size := spec.Size
	if size.Width == 0 || size.Height == 0 {
		size = DefaultSize
	}
	common, err := spec.commonArgs()
	if err != nil {
		return "", fmt.Errorf("new session %q: %w", spec.Session, err)
	}
	argv, removeEnv, err := c.withEnvFile(ctx, spec.Env, spec.Argv)
	if err != nil {
		return "", fmt.Errorf("new session %q: %w", spec.Session, err)
	}
	args := []string{"new-session", "-d", "-P", "-F", paneIDFormat, "-s", Arg(EscapeFormat(spec.Session)),
		"-x", strconv.Itoa(size.Width), "-y", strconv.Itoa(size.Height)}
	args = append(args, common...)
	args = append(args, argvArgs(argv)...)
	if spec.RemainOnExit {
		// Runs in the same command queue as new-session, before the server
		// can notice the child's exit.
		args = append(args, ";", "set-option", "-g", "remain-on-exit", "on")
	}
	args = append(args, spec.pipeArgs()...)
	args = append(args, spec.thenArgs()...)
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		removeEnv()
		return "", fmt.Errorf("new session %q: %w", spec.Session, err)
	}
	return c.newPane(out), nil
}

// NewWindow creates a detached window in an existing session and returns its pane.
func (c *Client) NewWindow(ctx context.Context, spec WindowSpec) (string, error) {
	common, err := spec.commonArgs()
	if err != nil {
		return "", fmt.Errorf("new window in %q: %w", spec.Session, err)
	}
	argv, removeEnv, err := c.withEnvFile(ctx, spec.Env, spec.Argv)
	if err != nil {
		return "", fmt.Errorf("new window in %q: %w", spec.Session, err)
	}
	var args []string
	if spec.RemainOnExit {
		args = append(args, "set-option", "-g", "remain-on-exit", "on", ";")
	}
	args = append(args, "new-window", "-d", "-P", "-F", paneIDFormat, "-t", Arg(SessionTarget(spec.Session)+":"))
	args = append(args, common...)
	args = append(args, argvArgs(argv)...)
	args = append(args, spec.pipeArgs()...)
	args = append(args, spec.thenArgs()...)
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		removeEnv()
		return "", fmt.Errorf("new window in session %q: %w", spec.Session, err)
	}
	return c.newPane(out), nil
}

// Launch creates the session if it does not exist, else a new window in it,
// and returns the new pane's id. Concurrent launches into the same new session
// are safe: the loser of the creation race adds a window instead.
func (c *Client) Launch(ctx context.Context, spec WindowSpec) (string, error) {
	// The session is usually there already (one per project): the window
	// is tried first, which saves a call (a round trip on another
	// machine) on every launch but a project's first.
	pane, err := c.NewWindow(ctx, spec)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return pane, err
	}
	exists, err := c.HasSession(ctx, spec.Session)
	if err != nil {
		return "", err
	}
	if !exists {
		pane, err := c.NewSession(ctx, spec)
		if err == nil {
			return pane, nil
		}
		var te *Error
		if !errors.As(err, &te) || !strings.Contains(te.Stderr, "duplicate session") {
			return "", err
		}
	}
	return c.NewWindow(ctx, spec)
}

// HasSession reports whether a session with exactly this name exists. A
// server that is not running has no sessions.
func (c *Client) HasSession(ctx context.Context, name string) (bool, error) {
	_, err := c.run(ctx, nil, "has-session", "-t", Arg(SessionTarget(name)))
	if err == nil {
		return true, nil
	}
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return false, fmt.Errorf("has session %q: %w", name, err)
}
