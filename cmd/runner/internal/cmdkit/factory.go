package cmdkit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Factory is what a command family needs of package main. The function
// fields are called when a command runs (after the flags are parsed, so
// --socket is known); a nil one is a command that cannot open that thing.
//
// Out and ErrOut are for people: package main makes the control
// characters written there visible (task texts, answers and screens come
// from agents). RawOut and RawErr are the streams as given, for JSON, a
// patch, or a pane's escapes asked for.
type Factory struct {
	In             io.Reader
	Out, ErrOut    io.Writer
	RawOut, RawErr io.Writer
	Getenv         func(string) string

	// Config loads runner's config (config.Load over Getenv).
	Config func() (*config.Config, error)
	// Store opens the state store with the config's settings.
	Store func() (*state.Store, error)
	// Env opens the runner environment and loads the config; with
	// progress, its progress lines go to ErrOut.
	Env func(progress bool) (*runner.Env, *config.Config, error)
	// Tmux is the tmux client of --socket (host ""), or the one of a
	// registered host's tmux over ssh.
	Tmux func(ctx context.Context, host string) (*tmuxctl.Client, error)
	// TmuxFor is the tmux client of --socket running cfg's tmux_binary.
	TmuxFor func(cfg *config.Config) *tmuxctl.Client
	// JSONErrors records that the command runs with --json, so that its
	// error is printed as JSON too.
	JSONErrors func(bool)
	// Checks are the root command's checks before a command runs (a
	// sandboxed caller's commands and flags, no negative duration), for a
	// family whose PersistentPreRunE replaces the root's.
	Checks func(c *cobra.Command) error
	// IsTerminal reports whether r is a terminal someone can answer at.
	IsTerminal func(r io.Reader) bool
	// Socket is the tmux server --socket named ("": the default).
	Socket func() string
}

// SocketUsage is the help of runner's --socket, runner's and runner-ext's.
const SocketUsage = "tmux server: a name (-L) or, if it contains '/', a socket path (-S); default $RUNNER_TMUX_SOCKET or \"runner\""

// PrintJSON writes v to RawOut as indented JSON followed by a newline.
func (f *Factory) PrintJSON(v any) error { return PrintJSON(f.RawOut, v) }

// PrintJSON writes v to w as indented JSON, HTML characters kept, and a
// newline: runner's every --json answer.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// JSONFlag adds --json to cmd, bound to v (usage: its help, default "print
// the result as JSON"), and records before the command runs whether it
// was given (JSONErrors).
func (f *Factory) JSONFlag(cmd *cobra.Command, v *bool, usage ...string) {
	text := "print the result as JSON"
	if len(usage) > 0 {
		text = usage[0]
	}
	cmd.Flags().BoolVar(v, "json", false, text)
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		f.JSONErrors(*v)
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// ReadText returns the text argument (argv's one), or the content of
// file ('-': In), warning on ErrOut when it holds control characters a
// delivery removes.
func (f *Factory) ReadText(argv []string, file string) (string, error) {
	text, err := f.ReadTextRaw(argv, file)
	if err == nil {
		if _, n := tmuxctl.PasteText(text); n > 0 {
			fmt.Fprintf(f.ErrOut, "runner: warning: the text holds %d control character(s) (ESC, CR, …) that would act as keys in the agent's pane; they are removed before it is delivered (tab and newline are kept)\n", n)
		}
	}
	return text, err
}

// ReadTextRaw is ReadText without the warning. A request that came
// through a sandboxed task's door reads a --file only inside the task's
// folder (door.ReadConfinedFile).
func (f *Factory) ReadTextRaw(argv []string, file string) (string, error) {
	switch {
	case file != "" && len(argv) > 0:
		return "", fault.Usagef("give the text as an argument or with --file, not both")
	case file == "-":
		b, err := io.ReadAll(f.In)
		if err != nil {
			return "", fmt.Errorf("read standard input: %w", err)
		}
		return string(b), nil
	case file != "" && f.Getenv(door.EnvConfined) != "":
		cwd, _ := os.Getwd() // the door runs runner in the caller's folder, inside the task's
		return door.ReadConfinedFile(f.Getenv(door.EnvConfinedDir), cwd, file)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fault.Usagef("--file: %v", err)
		}
		return string(b), nil
	case len(argv) == 1:
		return argv[0], nil
	}
	return "", fault.Usagef("no text: give TEXT, --file F or --file -")
}

// WithTimeout bounds ctx by d when d > 0.
func WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// IsTerminal reports whether r is a terminal (an *os.File on one).
func IsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
