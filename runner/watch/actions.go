package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Every action runs the runner binary with the same arguments a user
// would type, so it takes the same code path as the CLI command: same
// checks, same errors, same exit codes (shown in the status line).

// actionTimeout bounds an action; dispatch, send and msg return at once
// (--detach), cancel waits for the agent to stop.
const actionTimeout = 2 * time.Minute

// doneMsg is an action's outcome.
type doneMsg struct {
	what string // e.g. "cancel t_ab12"
	out  string // its stdout
	err  error  // with its stderr's last line
	tab  tab    // where out goes: tabDiff, tabLogs, or none
	id   string
}

// run runs `runner ARGS…` and reports it as what.
func run(ctx context.Context, exe, what string, t tab, id string, args ...string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, actionTimeout)
		defer cancel()
		cmd := subproc.Command(ctx, exe, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			msg := strings.TrimSpace(textutil.LastLines(strings.TrimSpace(stderr.String()), 1))
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				err = fmt.Errorf("exit %d: %s", ee.ExitCode(), textutil.OrDash(msg))
			} else {
				err = fmt.Errorf("%v %s", err, msg)
			}
		}
		return doneMsg{what: what, out: stdout.String(), err: err, tab: t, id: id}
	}
}

// attachedMsg says the user is back from a pane (tmux attach), or that
// their tmux client was switched to it (pane set).
type attachedMsg struct {
	err  error
	pane string // switched: the pane the client shows now
}

// attach takes the user to t's pane: switch-client when watch runs inside
// a client of runner's own tmux server (watch stays where it was; come
// back with the usual tmux keys), else `tmux attach` in this terminal (ssh
// -t to its host for a task there), with TMUX unset so it works from
// inside another tmux too, returning to the view when the user detaches.
func attach(ctx context.Context, d Deps, getenv func(string) string, t *state.Task) tea.Cmd {
	pane := t.Tmux.Pane
	if t.Tmux.Host != "" {
		argv, err := d.Panes.AttachArgv(ctx, t.ID)
		if err != nil {
			return func() tea.Msg { return attachedMsg{err: err} }
		}
		return tea.ExecProcess(tmuxctl.AttachCommand(argv), func(err error) tea.Msg { return attachedMsg{err: err} })
	}
	if err := d.TC.SelectPane(ctx, pane); err != nil {
		return func() tea.Msg { return attachedMsg{err: err} }
	}
	if sameServer(ctx, d.TC, getenv("TMUX")) {
		return func() tea.Msg {
			_, err := d.TC.Command(ctx, "switch-client", "-t", pane)
			return attachedMsg{err: err, pane: pane}
		}
	}
	return tea.ExecProcess(tmuxctl.AttachCommand(d.TC.AttachArgv(pane, false)), func(err error) tea.Msg { return attachedMsg{err: err} })
}

// sameServer reports whether $TMUX (socket,pid,session) names the server
// tc talks to.
func sameServer(ctx context.Context, tc Tmux, tmuxEnv string) bool {
	if tmuxEnv == "" {
		return false
	}
	sock, _, _ := strings.Cut(tmuxEnv, ",")
	out, err := tc.Command(ctx, "display-message", "-p", "#{socket_path}")
	return err == nil && strings.TrimSpace(out) == sock
}

// Popup opens `runner watch ARGS…` in a display-popup over the tmux
// client the caller runs in ($TMUX), with the runner environment passed
// along (the popup's shell starts from the tmux server's environment),
// and returns when the popup closes.
func Popup(ctx context.Context, getenv func(string) string, environ []string, exe string, args []string) error {
	tmuxEnv := getenv("TMUX")
	if tmuxEnv == "" {
		return errors.New("a popup needs tmux: not inside tmux ($TMUX is not set); run 'runner watch' instead")
	}
	sock, _, _ := strings.Cut(tmuxEnv, ",")
	words := []string{tmuxctl.ShellQuote(exe), "watch"}
	for _, a := range args {
		words = append(words, tmuxctl.ShellQuote(a))
	}
	popup := []string{"display-popup", "-E", "-w", "90%", "-h", "90%", "-T", " runner watch "}
	if wd, err := os.Getwd(); err == nil {
		popup = append(popup, "-d", wd)
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "RUNNER_") || strings.HasPrefix(name, "XDG_") || name == "NO_COLOR" || name == "HOME" || name == "PATH" {
			popup = append(popup, "-e", kv)
		}
	}
	popup = append(popup, strings.Join(words, " "))
	// No timeout: display-popup -E returns when the popup closes.
	if _, err := tmuxctl.New(sock, tmuxctl.WithTimeout(0)).Command(ctx, popup...); err != nil {
		return fmt.Errorf("open the popup: %w", err)
	}
	return nil
}

func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}
