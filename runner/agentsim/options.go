package agentsim

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Options configure one run of the simulated agent.
type Options struct {
	// Dir is the working directory for `write` and `run` and the hook's cwd;
	// empty means the process's current directory.
	Dir string
	// Env is the environment of `run` programs and the hook; nil means
	// os.Environ().
	Env []string
	// Record, when set, is a file that gets one JSON line {"prompt": …} per
	// submitted prompt, appended and fsynced before the turn starts.
	Record string
	// Hook, when set, is an argv run at the end of every finished turn with
	// a Stop event on stdin (see doc.go).
	Hook []string
	// ContextHook, when set, is an argv run after each tool (write, run)
	// with a PostToolUse event on stdin; the additionalContext of its
	// output is shown in the turn (see doc.go).
	ContextHook []string
	// Startup delays the first prompt box (input during it is discarded).
	Startup time.Duration
	// Trust shows the trust dialog before the first prompt box.
	Trust bool
	// TrustLate shows the trust dialog after the first prompt was
	// submitted, before its turn runs (as Codex does in a new folder): the
	// prompt is held and runs once the dialog is accepted.
	TrustLate bool
	// SessionID is given to the hook and printed in the resume hint at
	// exit; empty means a random one.
	SessionID string
	// Resumed (--resume ID) says SessionID names an earlier conversation:
	// the sim says so at start, and `recall` sees that session's prompts.
	Resumed bool
	// SessionDir keeps one file per session with its prompts (what a
	// resumed sim recalls); empty means $XDG_STATE_HOME/runner-agent-sim,
	// else ~/.local/state/runner-agent-sim.
	SessionDir string
	// TranscriptDir, when set, gets a Claude-style transcript per session
	// (see transcript.go): the hook's input then names it instead of
	// carrying the turn's usage, which the file has TranscriptLate after
	// the hook ran.
	TranscriptDir  string
	TranscriptLate time.Duration
}

// sessionFile is the file of the session's prompts.
func (o *Options) sessionFile() string {
	return filepath.Join(o.SessionDir, filepath.Base(o.SessionID)+".txt")
}

// ResumeHint is the line the sim prints when it exits at its prompt.
func ResumeHint(id string) string { return "Resume this session with: runner agent-sim --resume " + id }

// ErrNotTerminal is returned by Run when its file is not a terminal.
var ErrNotTerminal = errors.New("not a terminal")

// fill resolves the defaults of o.
func (o *Options) fill() error {
	if o.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("agent-sim: current directory: %w", err)
		}
		o.Dir = wd
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return fmt.Errorf("agent-sim: directory %s: %w", o.Dir, err)
	}
	o.Dir = abs
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.SessionID == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("agent-sim: session id: %w", err)
		}
		o.SessionID = hex.EncodeToString(b[:])
	}
	if o.SessionDir == "" {
		base := os.Getenv("XDG_STATE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return fmt.Errorf("agent-sim: session dir: %w", err)
			}
			base = filepath.Join(home, ".local", "state")
		}
		o.SessionDir = filepath.Join(base, "runner-agent-sim")
	}
	if o.Record != "" {
		if !filepath.IsAbs(o.Record) {
			o.Record = filepath.Join(o.Dir, o.Record)
		}
		// Fail now, not at the first prompt, when the record cannot be written.
		f, err := os.OpenFile(o.Record, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("agent-sim: record file: %w", err)
		}
		f.Close()
	}
	return nil
}
