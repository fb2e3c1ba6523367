package runner

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/tmuxctl"

	"github.com/runner-cli/runner/runner/exit"

	"github.com/runner-cli/runner/state"
)

// CheckTaskSize refuses a task text longer than the profile's MaxTaskBytes:
// past it, delivery through the agent's input is not known to be confirmed.
// The error is a usage error (exit 2) that says the limit and suggests
// handing the agent a file to read instead.
func CheckTaskSize(p *profile.Profile, text string) error {
	max := p.MaxTaskBytes()
	if len(text) <= max {
		return nil
	}
	return exit.Usagef("the task is %d bytes, more than the %s (%d bytes) agent %s takes as a prompt (its max_task): save the text in a file in the project "+
		"and dispatch a short task that tells the agent to read it, e.g. \"Read SPEC.md and do what it says\" (or raise profiles.%s.max_task in the config at your own risk)",
		len(text), byteSize(max), max, p.Name, p.Name)
}

// byteSize renders n bytes as "64 KiB", "1.5 MiB" or "300 bytes".
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<20))) + " MiB"
	case n >= 1<<10:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<10))) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimZero(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}

// recordText prepares the record of a new task's text: a text longer than
// state.InlineTextMax is written whole to its own file first (durable
// before the record points at it) and the record keeps its beginning. It
// returns the record's Text and TextFile.
func recordText(store *state.Store, id, text string) (string, string, error) {
	if len(text) <= state.InlineTextMax {
		return text, "", nil
	}
	file, err := store.WriteTaskText(id, text)
	if err != nil {
		return "", "", err
	}
	return state.ClipText(text), file, nil
}

// transcriptShows reports, at most every 200 ms (else false), whether sig
// shows in the pane's transcript after offset, with escape sequences
// removed: the agent displayed the text it was given. With the composer
// empty again and no busy marker, that means the agent took the prompt
// and its turn already ended (a quick turn whose echo scrolled off the
// screen), whereas a prompt sent to an input that was not live never shows
// at all.
type transcriptShows struct {
	file   string
	offset int64
	sig    string
	last   time.Time
	seen   bool
}

func (ts *transcriptShows) check() bool {
	if ts.seen {
		return true
	}
	if ts.file == "" || ts.sig == "" || time.Since(ts.last) < 200*time.Millisecond {
		return false
	}
	ts.last = time.Now()
	f, err := os.Open(ts.file)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(ts.offset, io.SeekStart); err != nil {
		return false
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return false
	}
	ts.seen = bytes.Contains(b, []byte(ts.sig)) || bytes.Contains([]byte(tmuxctl.StripEscapes(string(b))), []byte(ts.sig))
	return ts.seen
}
