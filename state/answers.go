// The receipts of guarded answers to a task's dialogs (runner answer).

package state

import "time"

// The results of an answer.
const (
	AnswerPending = "pending" // reserved: its request is checking the screen or pressing
	AnswerPressed = "pressed" // the option was chosen and confirmed
	AnswerFailed  = "failed"  // pressing failed part way: something may have been pressed
	// AnswerRefused is an answer that pressed nothing (a stale digest, a
	// task not waiting, an option the dialog lacks): on the event stream
	// and in runner answer's output, never in Task.Answers.
	AnswerRefused = "refused"
)

// MaxAnswers bounds Task.Answers: the oldest receipts go first.
const MaxAnswers = 64

// AnswerReceipt is the record of one answer to a task's dialog: the
// operation id that makes it idempotent, the option chosen (its key and
// label), the digest of the dialog it answered, who gave it, when, and
// how it went.
type AnswerReceipt struct {
	Op     string    `json:"op"`
	Option string    `json:"option"`
	Label  string    `json:"label"`
	Digest string    `json:"digest"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
	Result string    `json:"result"`
}

// AnswerOf returns the receipt of operation op, if t has one.
func (t *Task) AnswerOf(op string) (*AnswerReceipt, bool) {
	for i := range t.Answers {
		if t.Answers[i].Op == op {
			return &t.Answers[i], true
		}
	}
	return nil, false
}

// AddAnswer appends receipt r, keeping the last MaxAnswers.
func (t *Task) AddAnswer(r AnswerReceipt) {
	t.Answers = append(t.Answers, r)
	if n := len(t.Answers) - MaxAnswers; n > 0 {
		t.Answers = append(t.Answers[:0:0], t.Answers[n:]...)
	}
}

func sameAnswer(a, b AnswerReceipt) bool {
	return a.Op == b.Op && a.Option == b.Option && a.Label == b.Label && a.Digest == b.Digest && a.By == b.By &&
		a.At.Equal(b.At) && a.Result == b.Result
}

// StreamAnswer puts receipt r of an answer to t on the event stream
// (EventAnswer) with this write: r.Result is its status, why the reason
// it was refused ("" for one pressed or failed).
func (st *State) StreamAnswer(t *Task, r AnswerReceipt, why string) {
	st.emitted = append(st.emitted, StreamEvent{Type: EventAnswer, Task: t.ID, Project: t.Project, Host: t.Tmux.Host, Pool: t.Tmux.Pool, Group: t.Group,
		Status: r.Result, Reason: why, Option: r.Option, Label: r.Label, Digest: r.Digest, Op: r.Op, By: r.By})
}
