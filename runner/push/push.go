// Package push tells the user's phone that a task needs them (config
// notify_push): a webhook's signed JSON POST, an ntfy message. A
// supervisor only queues a push (Queue: a small durable file in the state
// directory, state's push outbox, no network); one sender process (package send,
// runner push-send in runner-ext, started by the queuer when none runs) delivers it
// with retries and exponential backoff, a bounded number of times,
// without ever holding a task up. A push has a key (Key): the same dialog
// seen again, or its status written again, pushes nothing more.
//
// Of the module it imports runner/config, runner/dialog, runner/profile,
// state and internal/textutil (TestImports).
package push

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/dialog"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// SignatureHeader carries a signed webhook's signature: "sha256=" and the
// hex HMAC-SHA256 of the body under the target's secret.
const SignatureHeader = "X-Runner-Signature"

// Sign is the value of SignatureHeader for body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify says whether sig (SignatureHeader's value) signs body under
// secret, in constant time: what a receiver does.
func Verify(secret string, body []byte, sig string) bool {
	return hmac.Equal([]byte(sig), []byte(Sign(secret, body)))
}

// Key names the push of t's status now: its task, its status, its turn and
// the dialog (digest, else question). A redraw of one dialog has one key.
func Key(t *state.Task, dialog *state.PushDialog) string {
	what := t.Question
	if dialog != nil && dialog.Digest != "" {
		what = "digest " + dialog.Digest
	}
	if t.Status != state.StatusNeedsInput {
		what = ""
	}
	return strings.Join([]string{t.ID, string(t.Status), strconv.Itoa(t.TurnCount), what}, "|")
}

// Event is what the push of t's status says; serveURL, when set, gives it
// the link to the task's page.
func Event(t *state.Task, serveURL string, dialog *state.PushDialog) state.PushEvent {
	ev := state.PushEvent{Task: t.ID, Status: string(t.Status), Time: statusTime(t), Project: t.Project,
		Agent: t.Agent, Title: textutil.Headline(t.Text, 100), Reason: t.LastReason(), Dialog: dialog}
	if t.Status == state.StatusNeedsInput {
		ev.Question = t.Question
		if dialog != nil && dialog.Question != "" {
			ev.Question = dialog.Question
		}
	}
	if serveURL != "" {
		ev.URL = strings.TrimRight(serveURL, "/") + "/#/tasks/" + url.PathEscape(t.ID)
	}
	return ev
}

// statusTime is when t took its status (its last history entry).
func statusTime(t *state.Task) time.Time {
	if n := len(t.History); n > 0 {
		return t.History[n-1].Time
	}
	return clock.Now().UTC()
}

// Queue queues the push of t's status for the targets that want it, unless
// none does or a push of its key was queued already; queued says whether
// it was (then a sender must run: see package send).
func Queue(s *state.Store, targets []config.PushTarget, serveURL string, t *state.Task, dialog *state.PushDialog) (queued bool, err error) {
	wanted := false
	for _, tg := range targets {
		wanted = wanted || tg.Wants(t.Status)
	}
	if !wanted {
		return false, nil
	}
	return s.QueuePush(&state.Push{Key: Key(t, dialog), Queued: clock.Now().UTC(), Event: Event(t, serveURL, dialog)})
}

// Backoff is how long the sender waits after a push's attempt-th failed
// attempt to a target: 1s, 2s, 4s … at most a minute.
func Backoff(attempt int) time.Duration {
	if attempt > 6 {
		return time.Minute
	}
	return min(time.Second<<max(attempt-1, 0), time.Minute)
}

// MaxAttempts bounds the attempts of one push to one target.
const MaxAttempts = 6

// Health is how one target fares, for runner doctor.
type Health struct {
	Target string
	state.PushTargetStatus
	// Failing: its last attempt failed (a failure after its last success).
	Failing bool
}

// Healths reads each target's last success and failure, and how many
// pushes wait in the outbox.
func Healths(s *state.Store, targets []config.PushTarget) (out []Health, queued int, err error) {
	st, err := s.PushStatus()
	for _, t := range targets {
		h := Health{Target: t.ID()}
		if ts := st[h.Target]; ts != nil {
			h.PushTargetStatus = *ts
			h.Failing = !ts.LastFailure.IsZero() && ts.LastFailure.After(ts.LastSent)
		}
		out = append(out, h)
	}
	pushes, oerr := s.PushOutbox()
	return out, len(pushes), errors.Join(err, oerr)
}

// Config is where pushes go: the config's notify_push and serve_url,
// and the profiles a dialog is read with.
type Config struct {
	Targets  []config.PushTarget
	ServeURL string
	Profiles []*profile.Profile
}

// Dialog is the dialog t's screen tail shows (t needs input), read with
// its agent's profile as runner status reads the pane: nil when none is.
func (c Config) Dialog(t *state.Task) *state.PushDialog {
	if t.Status != state.StatusNeedsInput {
		return nil
	}
	for _, p := range c.Profiles {
		if p.Name != t.Agent {
			continue
		}
		d, ok := dialog.Read(p, t.ResultTail)
		if !ok {
			return nil
		}
		pd := &state.PushDialog{Digest: d.Digest, Question: d.Question}
		for _, o := range d.Options {
			pd.Options = append(pd.Options, state.PushOption{Key: o.Key, Label: o.Label})
		}
		return pd
	}
	return nil
}

// Queue queues the push of t's status (no network: a file of the state
// directory) and, when it was queued and no sender runs, starts one
// (start: runner push-send, detached; one that runs takes what was queued
// before it lets go of its lock). What goes wrong is said (warn) and
// holds nothing up.
func (c Config) Queue(s *state.Store, t *state.Task, start func() error, warn func(format string, args ...any)) {
	if len(c.Targets) == 0 {
		return
	}
	queued, err := Queue(s, c.Targets, c.ServeURL, t, c.Dialog(t))
	if err != nil {
		warn("task %s: push not queued: %v", t.ID, err)
		return
	}
	if !queued {
		return
	}
	release, ok := s.PushSender()
	if !ok {
		return
	}
	release()
	if err := start(); err != nil {
		warn("start the push sender: %v", err)
	}
}
