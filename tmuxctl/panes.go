package tmuxctl

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/ctxtime"
)

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
		deadline := clock.Now().Add(2 * time.Second)
		for p.DeadStatus < 0 && clock.Now().Before(deadline) {
			if ctxtime.Sleep(ctx, 10*time.Millisecond) != nil {
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
	if c.snap == nil || clock.Since(c.snapAt) > maxAge {
		panes, err := c.ListPanes(ctx)
		c.snapAt, c.snapErr = clock.Now(), err
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
