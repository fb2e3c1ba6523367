package tmuxctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// WindowSpec describes a new window (and its first pane).
type WindowSpec struct {
	Session string   // session name (created if NewSession is used)
	Name    string   // window name (optional)
	Cwd     string   // start directory (optional)
	Env     []string // K=V pairs set in the pane's environment
	Argv    []string // command as argv; empty means tmux's default shell
	Size    Size     // session size, used only when a session is created
	// RemainOnExit keeps the pane after its process exits, so its exit
	// status can be read (#{pane_dead_status}). It is set as the server's
	// global window option in the same tmux invocation that creates the
	// pane, so even a process that exits at once is kept.
	RemainOnExit bool
	// PipeTo, if set, appends the pane's output to this file from its very
	// first byte: pipe-pane runs in the same tmux invocation that creates
	// the window (which needs Name), before the server reads any output.
	PipeTo string
}

// pipeArgs returns the command-sequence tail that starts the pipe.
func (s WindowSpec) pipeArgs() []string {
	if s.PipeTo == "" || s.Name == "" {
		return nil
	}
	return []string{";", "pipe-pane", "-o", "-t", Arg(SessionTarget(s.Session) + ":=" + s.Name), Arg("exec cat >> " + ShellQuote(s.PipeTo))}
}

func (s WindowSpec) commonArgs() ([]string, error) {
	var args []string
	if s.Name != "" {
		if err := ValidateSessionName(s.Name); err != nil {
			return nil, fmt.Errorf("window %w", err)
		}
		args = append(args, "-n", Arg(s.Name))
	}
	if s.Cwd != "" {
		args = append(args, "-c", Arg(s.Cwd))
	}
	for _, kv := range s.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t\n") {
			return nil, fmt.Errorf("environment entry %q: want KEY=VALUE", kv)
		}
		args = append(args, "-e", Arg(kv))
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

const paneIDFormat = "#{pane_id}"

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
	args := []string{"new-session", "-d", "-P", "-F", paneIDFormat, "-s", Arg(spec.Session),
		"-x", strconv.Itoa(size.Width), "-y", strconv.Itoa(size.Height)}
	args = append(args, common...)
	args = append(args, argvArgs(spec.Argv)...)
	if spec.RemainOnExit {
		// Runs in the same command queue as new-session, before the server
		// can notice the child's exit.
		args = append(args, ";", "set-option", "-g", "remain-on-exit", "on")
	}
	args = append(args, spec.pipeArgs()...)
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		return "", fmt.Errorf("new session %q: %w", spec.Session, err)
	}
	return strings.TrimSpace(out), nil
}

// NewWindow creates a detached window in an existing session and returns its pane.
func (c *Client) NewWindow(ctx context.Context, spec WindowSpec) (string, error) {
	common, err := spec.commonArgs()
	if err != nil {
		return "", fmt.Errorf("new window in %q: %w", spec.Session, err)
	}
	var args []string
	if spec.RemainOnExit {
		args = append(args, "set-option", "-g", "remain-on-exit", "on", ";")
	}
	args = append(args, "new-window", "-d", "-P", "-F", paneIDFormat, "-t", Arg(SessionTarget(spec.Session)+":"))
	args = append(args, common...)
	args = append(args, argvArgs(spec.Argv)...)
	args = append(args, spec.pipeArgs()...)
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		return "", fmt.Errorf("new window in session %q: %w", spec.Session, err)
	}
	return strings.TrimSpace(out), nil
}

// Launch creates the session if it does not exist, else a new window in it,
// and returns the new pane's id. Concurrent launches into the same new session
// are safe: the loser of the creation race adds a window instead.
func (c *Client) Launch(ctx context.Context, spec WindowSpec) (string, error) {
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

// PaneInfo is what runner needs to know about a pane.
type PaneInfo struct {
	ID             string `json:"pane_id"`
	PID            int    `json:"pid"`
	Dead           bool   `json:"dead"`
	DeadStatus     int    `json:"dead_status"`
	CurrentCommand string `json:"current_command"`
	CurrentPath    string `json:"current_path"`
	InMode         bool   `json:"in_mode"`
	AlternateOn    bool   `json:"alternate_on"`
	CursorX        int    `json:"cursor_x"`
	CursorY        int    `json:"cursor_y"`
	Width          int    `json:"width"`
	Height         int    `json:"height"`
	HistorySize    int    `json:"history_size"`
	WindowActivity int64  `json:"window_activity"` // unix seconds
	Pipe           bool   `json:"pipe"`            // a pipe-pane is open
	Session        string `json:"session"`
	WindowID       string `json:"window_id"`
	WindowIndex    int    `json:"window_index"`
	WindowName     string `json:"window_name"`
}

// paneFields lists the format of each PaneInfo field, in parse order.
var paneFields = []string{
	"pane_id", "pane_pid", "pane_dead", "pane_dead_status", "pane_current_command",
	"pane_current_path", "pane_in_mode", "alternate_on", "cursor_x", "cursor_y",
	"pane_width", "pane_height", "history_size", "window_activity", "pane_pipe",
	"session_name", "window_id", "window_index", "window_name", "pane_dead_signal",
}

const fieldSep = "\x1f"

func paneFormat() string {
	parts := make([]string, len(paneFields))
	for i, f := range paneFields {
		parts[i] = "#{" + f + "}"
	}
	return strings.Join(parts, fieldSep)
}

// parsePaneLine parses one line printed with paneFormat.
func parsePaneLine(line string) (PaneInfo, error) {
	f := strings.Split(line, fieldSep)
	if len(f) != len(paneFields) {
		return PaneInfo{}, fmt.Errorf("unexpected pane line %q: %d fields, want %d", line, len(f), len(paneFields))
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	// tmux marks a pane dead when its pty closes, which can be a moment
	// before it has reaped the process: until then the exit status is not
	// known and DeadStatus is -1 (Pane waits briefly for it).
	dead := f[2] == "1"
	status := atoi(f[3])
	switch {
	case f[3] != "":
	case f[19] != "":
		status = 128 + atoi(f[19])
	case dead:
		status = -1
	}
	return PaneInfo{
		ID: f[0], PID: atoi(f[1]), Dead: dead, DeadStatus: status,
		CurrentCommand: f[4], CurrentPath: f[5], InMode: f[6] == "1", AlternateOn: f[7] == "1",
		CursorX: atoi(f[8]), CursorY: atoi(f[9]), Width: atoi(f[10]), Height: atoi(f[11]),
		HistorySize: atoi(f[12]), WindowActivity: int64(atoi(f[13])), Pipe: f[14] == "1",
		Session: f[15], WindowID: f[16], WindowIndex: atoi(f[17]), WindowName: f[18],
	}, nil
}

func parsePaneList(out string) ([]PaneInfo, error) {
	var panes []PaneInfo
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		p, err := parsePaneLine(line)
		if err != nil {
			return nil, err
		}
		panes = append(panes, p)
	}
	return panes, nil
}

// ListPanes lists every pane on the server. A server that is not running has
// no panes (and no error).
func (c *Client) ListPanes(ctx context.Context) ([]PaneInfo, error) {
	out, err := c.run(ctx, nil, "list-panes", "-a", "-F", paneFormat())
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("list panes: %w", err)
	}
	panes, err := parsePaneList(out)
	if err != nil {
		return nil, fmt.Errorf("list panes: %w", err)
	}
	sort.SliceStable(panes, func(i, j int) bool {
		if panes[i].Session != panes[j].Session {
			return panes[i].Session < panes[j].Session
		}
		return panes[i].WindowIndex < panes[j].WindowIndex
	})
	return panes, nil
}

// Pane returns the current information of one pane. A missing pane is an
// error wrapping ErrNotFound.
func (c *Client) Pane(ctx context.Context, pane string) (PaneInfo, error) {
	if err := validatePaneID(pane); err != nil {
		return PaneInfo{}, err
	}
	out, err := c.run(ctx, nil, "display-message", "-p", "-t", pane, paneFormat())
	if err != nil {
		return PaneInfo{}, fmt.Errorf("pane %s: %w", pane, err)
	}
	p, err := parsePaneLine(strings.TrimRight(out, "\n"))
	if err != nil {
		return PaneInfo{}, fmt.Errorf("pane %s: %w", pane, err)
	}
	if p.ID != pane {
		// display-message falls back to the current pane when the target
		// vanished between calls; never report another pane's state.
		return PaneInfo{}, fmt.Errorf("pane %s: %w", pane, ErrNotFound)
	}
	if p.Dead && p.DeadStatus < 0 && p.PID > 0 {
		if st, known, zombie := ZombieExit(p.PID); zombie && known {
			p.DeadStatus = st
		}
	}
	if p.Dead && p.DeadStatus < 0 && !statusWait(ctx) {
		// Dead but not reaped yet: give tmux a moment to learn the status.
		deadline := time.Now().Add(2 * time.Second)
		for p.DeadStatus < 0 && time.Now().Before(deadline) {
			if sleepCtx(ctx, 10*time.Millisecond) != nil {
				break
			}
			q, err := c.Pane(context.WithValue(ctx, statusWaitKey{}, true), pane)
			if err != nil {
				return PaneInfo{}, err
			}
			p = q
		}
	}
	return p, nil
}

type statusWaitKey struct{}

func statusWait(ctx context.Context) bool { return ctx.Value(statusWaitKey{}) != nil }

// validatePaneID accepts only tmux pane ids ("%12"), so a pane argument can
// never be mistaken for another target or a flag.
func validatePaneID(pane string) error {
	if len(pane) < 2 || pane[0] != '%' {
		return fmt.Errorf("pane %q: want a pane id like %%12 (see 'runner tmux list'): %w", pane, ErrBadTarget)
	}
	if _, err := strconv.Atoi(pane[1:]); err != nil {
		return fmt.Errorf("pane %q: want a pane id like %%12 (see 'runner tmux list'): %w", pane, ErrBadTarget)
	}
	return nil
}

// ErrBadTarget is wrapped when a pane or session argument is malformed.
var ErrBadTarget = errors.New("bad target")

// recentPane returns the pane's info from a server-wide list-panes snapshot
// no older than maxAge, shared by every goroutine using this client: many
// concurrent waits on quiet panes cost one tmux call per maxAge in all, not
// one per pane. A missing pane wraps ErrNotFound.
func (c *Client) recentPane(ctx context.Context, pane string, maxAge time.Duration) (PaneInfo, error) {
	c.snapMu.Lock()
	defer c.snapMu.Unlock()
	if c.snap == nil || time.Since(c.snapAt) > maxAge {
		panes, err := c.ListPanes(ctx)
		c.snapAt, c.snapErr = time.Now(), err
		c.snap = make(map[string]PaneInfo, len(panes))
		for _, p := range panes {
			c.snap[p.ID] = p
		}
	}
	if c.snapErr != nil {
		return PaneInfo{}, c.snapErr
	}
	p, ok := c.snap[pane]
	if !ok {
		return PaneInfo{}, fmt.Errorf("pane %s: %w", pane, ErrNotFound)
	}
	if p.Dead {
		return p, &DeadError{Pane: pane, Status: p.DeadStatus}
	}
	return p, nil
}

// alive returns the pane's info, or an error if it is missing or dead.
func (c *Client) alive(ctx context.Context, pane string) (PaneInfo, error) {
	p, err := c.Pane(ctx, pane)
	if err != nil {
		return p, err
	}
	if p.Dead {
		return p, &DeadError{Pane: pane, Status: p.DeadStatus}
	}
	return p, nil
}

// deadOr turns a tmux error that says the pane has exited into a DeadError
// with the exit status; other errors pass through.
func (c *Client) deadOr(ctx context.Context, pane string, err error) error {
	var te *Error
	if !errors.As(err, &te) || !strings.Contains(te.Stderr, "exited") {
		return err
	}
	p, perr := c.Pane(ctx, pane)
	if perr != nil {
		return perr
	}
	return &DeadError{Pane: pane, Status: p.DeadStatus}
}

// DeadError reports a pane whose process exited; Status is its exit status.
type DeadError struct {
	Pane   string
	Status int
}

func (e *DeadError) Error() string {
	if e.Status < 0 {
		return fmt.Sprintf("pane %s is dead (its process exited; tmux does not know its status yet)", e.Pane)
	}
	return fmt.Sprintf("pane %s is dead (its process exited with status %d)", e.Pane, e.Status)
}

// Is makes errors.Is(err, ErrPaneDead) true.
func (e *DeadError) Is(target error) bool { return target == ErrPaneDead }

// KillPane kills one pane.
func (c *Client) KillPane(ctx context.Context, pane string) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	if _, err := c.run(ctx, nil, "kill-pane", "-t", pane); err != nil {
		return fmt.Errorf("kill pane %s: %w", pane, err)
	}
	return nil
}

// KillWindow kills the window that holds pane.
func (c *Client) KillWindow(ctx context.Context, pane string) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	if _, err := c.run(ctx, nil, "kill-window", "-t", pane); err != nil {
		return fmt.Errorf("kill window of %s: %w", pane, err)
	}
	return nil
}

// KillSession kills the session with exactly this name.
func (c *Client) KillSession(ctx context.Context, name string) error {
	if _, err := c.run(ctx, nil, "kill-session", "-t", Arg(SessionTarget(name))); err != nil {
		return fmt.Errorf("kill session %q: %w", name, err)
	}
	return nil
}

// KillServer stops the server. A server that is not running is not an error.
func (c *Client) KillServer(ctx context.Context) error {
	if _, err := c.run(ctx, nil, "kill-server"); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("kill server: %w", err)
	}
	return nil
}

// OptionScope says where an option is set.
type OptionScope string

// Option scopes.
const (
	ScopeServer  OptionScope = "-s"
	ScopeGlobal  OptionScope = "-g"
	ScopeSession OptionScope = ""
	ScopeWindow  OptionScope = "-w"
	ScopePane    OptionScope = "-p"
)

// SetOption sets a tmux option on target (ignored for server and global scope).
func (c *Client) SetOption(ctx context.Context, scope OptionScope, target, name, value string) error {
	args := []string{"set-option", "-q"}
	if scope != "" {
		args = append(args, string(scope))
	}
	if target != "" && scope != ScopeServer && scope != ScopeGlobal {
		args = append(args, "-t", Arg(target))
	}
	args = append(args, "--", Arg(name), Arg(value))
	if _, err := c.run(ctx, nil, args...); err != nil {
		return fmt.Errorf("set option %s on %s: %w", name, target, err)
	}
	return nil
}

// ShowOption returns the value of a pane option (e.g. a user option "@x"); an
// unset option is "" with no error.
func (c *Client) ShowOption(ctx context.Context, pane, name string) (string, error) {
	if err := validatePaneID(pane); err != nil {
		return "", err
	}
	out, err := c.run(ctx, nil, "show-options", "-p", "-q", "-v", "-t", pane, "--", Arg(name))
	if err != nil {
		return "", fmt.Errorf("show option %s on %s: %w", name, pane, err)
	}
	return strings.TrimRight(out, "\n"), nil
}

// PipePane starts copying the pane's output to file (appending), unless a
// pipe is already open. The path is quoted for the shell tmux runs the pipe
// command with; it never contains user text beyond the path itself.
func (c *Client) PipePane(ctx context.Context, pane, file string) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	if _, err := c.run(ctx, nil, "pipe-pane", "-o", "-t", pane, Arg("exec cat >> "+ShellQuote(file))); err != nil {
		return fmt.Errorf("pipe pane %s to %s: %w", pane, file, err)
	}
	return nil
}

// StopPipe closes the pane's pipe-pane, if any.
func (c *Client) StopPipe(ctx context.Context, pane string) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	if _, err := c.run(ctx, nil, "pipe-pane", "-t", pane); err != nil {
		return fmt.Errorf("stop pipe of pane %s: %w", pane, err)
	}
	return nil
}

// ShellQuote quotes s as one POSIX shell word.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// AttachArgv returns the command that attaches the user's terminal to
// target (a session "=name" or a pane "%N"): attach-session, or
// switch-client when the caller already runs inside tmux.
func (c *Client) AttachArgv(target string, insideTmux bool) []string {
	verb := "attach-session"
	if insideTmux {
		verb = "switch-client"
	}
	return append(append([]string{c.bin}, SocketArgs(c.socket)...), verb, "-t", Arg(target))
}

// SelectPane makes pane the active pane of its window and its window the
// current one of its session, so an attach lands on it.
func (c *Client) SelectPane(ctx context.Context, pane string) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	if _, err := c.run(ctx, nil, "select-window", "-t", pane, ";", "select-pane", "-t", pane); err != nil {
		return fmt.Errorf("select pane %s: %w", pane, err)
	}
	return nil
}

// Exec replaces the current process with argv (from AttachArgv), keeping
// the caller's environment (TMUX too, so switch-client works).
func Exec(argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoTmux, err)
	}
	return syscall.Exec(path, argv, os.Environ())
}

// ServerPID returns the pid of the tmux server, so a watcher can notice the
// server's death with kill(pid, 0) instead of running tmux.
func (c *Client) ServerPID(ctx context.Context) (int, error) {
	out, err := c.run(ctx, nil, "display-message", "-p", "#{pid}")
	if err != nil {
		return 0, fmt.Errorf("server pid: %w", err)
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// Batch runs several tmux commands in one invocation (joined with ';'), each
// argument escaped with Arg. The commands are the caller's own; user text
// belongs in buffers (Paste), never here.
func (c *Client) Batch(ctx context.Context, cmds ...[]string) error {
	var args []string
	for i, cmd := range cmds {
		if i > 0 {
			args = append(args, ";")
		}
		for _, a := range cmd {
			args = append(args, Arg(a))
		}
	}
	if len(args) == 0 {
		return nil
	}
	if _, err := c.run(ctx, nil, args...); err != nil {
		return fmt.Errorf("tmux %s: %w", cmds[0][0], err)
	}
	return nil
}
