package answer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/dialog"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// ErrStale marks an answer refused because the task does not wait for
// it: not needs_input, no dialog on its screen, a dialog with another
// digest, another answer being pressed. Nothing was pressed. It is also
// a fault.ErrBusy (exit 5).
var ErrStale = errors.New("the dialog changed or the task is not waiting")

// stale returns an error that is both ErrStale and fault.ErrBusy.
func stale(format string, args ...any) error {
	return &staleError{fmt.Sprintf(format, args...)}
}

type staleError struct{ msg string }

func (e *staleError) Error() string { return e.msg }
func (e *staleError) Is(target error) bool {
	return target == ErrStale || target == fault.ErrBusy
}

// Bounds of an answer: how long a replay waits for the first request's
// result, how long the reservation is held for the dialog to leave after
// Enter, how long a pending reservation is believed (its request then
// died), and the rounds of cursor moves.
var (
	ReplayWait  = 30 * time.Second
	LeaveWait   = 5 * time.Second
	PendingLife = 2 * time.Minute
	moveRounds  = 4
	poll        = 30 * time.Millisecond
)

// Pane is what an answer does with the task's pane (tmuxctl.Client).
type Pane interface {
	CaptureScreen(ctx context.Context, pane string) (string, error)
	SendKeys(ctx context.Context, pane string, keys ...string) error
}

// Store is the state as an answer reads and records it: a *state.Store.
type Store interface {
	ReadTask(ctx context.Context, id string) (*state.Task, error)
	Update(ctx context.Context, fn func(*state.State) error) error
}

// Agent is a task's agent as an answer reaches it: the tmux server of its
// pane, here or on its host (Env.PaneClient), and its profile.
type Agent interface {
	Pane(ctx context.Context, t *state.Task) (Pane, error)
	Profile(t *state.Task) (*profile.Profile, error)
}

// Supervision is whether a live supervisor follows a task (Supervised),
// and one started after the press for a task none follows (Follow):
// Following.
type Supervision interface {
	Supervised(t *state.Task) bool
	Follow(ctx context.Context, t *state.Task) error
}

// Journal writes an entry about a task in the journal: a record.Book.
type Journal interface {
	Journal(ctx context.Context, t *state.Task, kind, msg string)
}

// Deps is what an answer uses, built by cmd/runner from its Env.
type Deps struct {
	Store Store
	// Now is the clock (nil: clock.Now).
	Now func() time.Time
	// Agent is the task's pane and profile.
	Agent Agent
	// Supervision follows a task after the press when nothing does (nil:
	// nothing is started).
	Supervision Supervision
	// Journal writes the answer's entries (nil: none).
	Journal Journal
}

func (d Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return clock.Now()
}

func (d Deps) journal(ctx context.Context, t *state.Task, msg string) {
	if d.Journal != nil {
		d.Journal.Journal(ctx, t, "answer", msg)
	}
}

// Request is one answer: the task's id, the option's key, the digest of
// the dialog it answers, the operation id ("" makes one) and who gives it.
type Request struct {
	Task, Option, Digest, Op, By string
}

// Receipt is an answer's receipt as runner answer --json prints it.
type Receipt struct {
	Task string `json:"task"`
	state.AnswerReceipt
	// Duplicate says the operation was answered before: this is its
	// first receipt, and nothing was pressed now.
	Duplicate bool `json:"duplicate"`
}

// NewOp makes an operation id.
func NewOp() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "op_" + hex.EncodeToString(b)
}

// validOp is an operation id: printable, no spaces, at most 128 bytes.
var validOp = textutil.LazyRegexp(`^[A-Za-z0-9._:@/+=-]{1,128}$`)

// Answer gives the answer r (see the package doc). The receipt comes back
// with a nil error when the option was pressed, or when r.Op was answered
// before (Duplicate; its error is that of the first receipt's result);
// else the error says why nothing was pressed (ErrStale, fault.ErrUsage)
// or what failed.
func Answer(ctx context.Context, d Deps, r Request) (Receipt, error) {
	if r.Op == "" {
		r.Op = NewOp()
	}
	switch {
	case r.Digest == "":
		return Receipt{}, fault.Usagef("answer: --digest is missing: read the dialog's digest with 'runner status --json %s'", r.Task)
	case r.Option == "":
		return Receipt{}, fault.Usagef("answer: which option? give its key (1, 2, …)")
	case !validOp.Re().MatchString(r.Op):
		return Receipt{}, fault.Usagef("answer: op %q: letters, digits and ._:@/+=- only, at most 128", r.Op)
	}
	rec := state.AnswerReceipt{Op: r.Op, Option: r.Option, Digest: r.Digest, By: r.By, At: d.now(), Result: state.AnswerPending}
	t, prev, err := reserve(ctx, d, r.Task, rec)
	if err != nil {
		if errors.Is(err, ErrStale) {
			d.release(ctx, r.Task, rec, err)
		}
		return Receipt{Task: r.Task, AnswerReceipt: rec}, err
	}
	if prev != nil {
		return replay(ctx, d, r.Task, *prev)
	}
	label, err := press(ctx, d, t, r)
	rec.Label = label
	switch {
	case err == nil:
		rec.Result = state.AnswerPressed
	case errors.Is(err, ErrStale), errors.Is(err, fault.ErrUsage), errors.Is(err, errNothingPressed):
		d.release(ctx, t.ID, rec, err)
		return Receipt{Task: t.ID, AnswerReceipt: rec}, err
	default:
		rec.Result = state.AnswerFailed
	}
	if werr := d.settle(ctx, t, rec); werr != nil && err == nil {
		err = werr
	}
	if err == nil && d.Supervision != nil && !d.Supervision.Supervised(t) {
		if ferr := d.Supervision.Follow(ctx, t); ferr != nil {
			err = fmt.Errorf("task %s: the option was pressed, but no supervisor follows the task now ('runner resume %s'): %w", t.ID, t.ID, ferr)
		}
	}
	return Receipt{Task: t.ID, AnswerReceipt: rec}, err
}

// errNothingPressed marks a press that failed before any key went.
var errNothingPressed = errors.New("nothing pressed")

// reserve finds op's receipt in the task's record (prev) or adds rec, a
// pending one, under the state lock; a task that does not wait for input,
// or has another answer pending, is refused.
func reserve(ctx context.Context, d Deps, id string, rec state.AnswerReceipt) (t *state.Task, prev *state.AnswerReceipt, err error) {
	err = d.Store.Update(ctx, func(st *state.State) error {
		t, prev = nil, nil
		x := st.Task(id)
		if x == nil {
			return fault.Usagef("task %s: not found (see 'runner ps --all')", id)
		}
		if p, ok := x.AnswerOf(rec.Op); ok {
			c := *p
			cp := *x
			prev, t = &c, &cp
			return nil
		}
		if x.Status != state.StatusNeedsInput {
			return stale("task %s is %s, not waiting for an answer: nothing pressed", id, x.Status)
		}
		for i := range x.Answers {
			o := &x.Answers[i]
			if o.Result != state.AnswerPending {
				continue
			}
			if rec.At.Sub(o.At) < PendingLife {
				return stale("task %s: another answer (op %s) is being pressed: nothing pressed", id, o.Op)
			}
			o.Result = state.AnswerFailed // its request died part way
		}
		x.AddAnswer(rec)
		cp := *x
		t = &cp
		return nil
	})
	return t, prev, err
}

// replay returns the first receipt of an operation answered before,
// waiting (at most ReplayWait) while its first request still presses.
func replay(ctx context.Context, d Deps, id string, prev state.AnswerReceipt) (Receipt, error) {
	deadline := clock.Now().Add(ReplayWait)
	for prev.Result == state.AnswerPending {
		if clock.Now().After(deadline) {
			return Receipt{Task: id, AnswerReceipt: prev, Duplicate: true}, stale("task %s: op %s is still being pressed by its first request", id, prev.Op)
		}
		select {
		case <-ctx.Done():
			return Receipt{Task: id, AnswerReceipt: prev, Duplicate: true}, ctx.Err()
		case <-time.After(poll):
		}
		t, err := d.Store.ReadTask(ctx, id)
		if err != nil {
			return Receipt{Task: id, AnswerReceipt: prev, Duplicate: true}, err
		}
		p, ok := t.AnswerOf(prev.Op)
		if !ok {
			// Its first request pressed nothing and let it go.
			return Receipt{Task: id, AnswerReceipt: prev, Duplicate: true}, stale("task %s: op %s pressed nothing (its dialog had changed): read the dialog again", id, prev.Op)
		}
		prev = *p
	}
	var err error
	if prev.Result == state.AnswerFailed {
		err = fmt.Errorf("task %s: op %s failed part way before (see 'runner status %s'); not pressed again", id, prev.Op, id)
	}
	return Receipt{Task: id, AnswerReceipt: prev, Duplicate: true}, err
}

// release drops the reservation of an answer that pressed nothing (if it
// made one), and puts the refusal on the event stream and in the journal.
func (d Deps) release(ctx context.Context, id string, rec state.AnswerReceipt, why error) {
	var t *state.Task
	_ = d.Store.Update(context.WithoutCancel(ctx), func(st *state.State) error {
		t = nil
		x := st.Task(id)
		if x == nil {
			return nil
		}
		x.Answers = removeOp(x.Answers, rec.Op)
		refused := rec
		refused.Result = state.AnswerRefused
		st.StreamAnswer(x, refused, why.Error())
		cp := *x
		t = &cp
		return nil
	})
	if t != nil {
		d.journal(ctx, t, fmt.Sprintf("refused option %s (op %s, digest %s, by %s): %v", rec.Option, rec.Op, rec.Digest, orDash(rec.By), why))
	}
}

// settle records the receipt's result, puts it on the event stream and
// journals it.
func (d Deps) settle(ctx context.Context, t *state.Task, rec state.AnswerReceipt) error {
	err := d.Store.Update(context.WithoutCancel(ctx), func(st *state.State) error {
		x := st.Task(t.ID)
		if x == nil {
			return nil
		}
		if p, ok := x.AnswerOf(rec.Op); ok {
			*p = rec
		} else {
			x.AddAnswer(rec)
		}
		st.StreamAnswer(x, rec, "")
		return nil
	})
	d.journal(ctx, t, fmt.Sprintf("%s option %s %q (op %s, digest %s, by %s)", rec.Result, rec.Option, rec.Label, rec.Op, rec.Digest, orDash(rec.By)))
	return err
}

func removeOp(rs []state.AnswerReceipt, op string) []state.AnswerReceipt {
	out := rs[:0:0]
	for _, r := range rs {
		if r.Op != op {
			out = append(out, r)
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// labelPattern matches the menu line of option o: its key, a dot, its
// label (any run of spaces where the label has one).
func labelPattern(o dialog.Option) string {
	words := strings.Fields(o.Label)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return `(?:^|[\s❯›>●])` + regexp.QuoteMeta(o.Key) + `\.\s+` + strings.Join(words, `\s+`)
}
