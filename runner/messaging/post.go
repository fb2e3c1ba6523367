// Posting and taking messages: the rules a message meets under the state
// lock (loop protection, merging, the queue's bounds), and the batch a
// supervisor claims for one delivery.

package messaging

import (
	"fmt"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// Limits on messages between tasks. The hop limit and the per-root cap come
// from the config (max_hops, max_messages_per_root).
const (
	// MaxMessageBytes bounds one message's text, merged repeats included.
	MaxMessageBytes = 32 << 10
	// MaxPendingPerTask bounds a task's queue of pending messages.
	MaxPendingPerTask = 32
	// MaxBatchMessages and MaxBatchBytes bound one delivery; the rest
	// waits for the next ready point.
	MaxBatchMessages = 16
	MaxBatchBytes    = 48 << 10
)

// Request is one `runner msg`.
type Request struct {
	// To is a task id (or unique prefix), "@parent", "@siblings" or
	// "@project:NAME".
	To   string
	Text string
	Type state.MessageType // "" means request
	// From is the sending task's id; "" means the task named by
	// RUNNER_TASK_ID in the environment, or the user outside any task.
	From string
	// MaxHops refuses a message past this many hops (config max_hops).
	MaxHops int
	// MaxPerRoot caps the messages sent within one tree of tasks (config
	// max_messages_per_root).
	MaxPerRoot int
}

// Outcome is what happened to a message for one recipient.
type Outcome struct {
	To     string `json:"to"`
	ID     string `json:"id,omitempty"`
	Result string `json:"result"` // queued, delivering, merged or refused
	Hops   int    `json:"hops"`
	// Reason says why it was refused, or where it waits.
	Reason string `json:"reason,omitempty"`
}

// The Outcome results.
const (
	Queued     = "queued"     // waits until the recipient's turn ends
	Delivering = "delivering" // the recipient was idle: a supervisor is typing it in now
	Merged     = "merged"     // merged into a pending message from the same sender and of the same type
	Refused    = "refused"    // not accepted (see Reason)
)

// Check refuses an empty or oversized message or an unknown type, and
// returns the type (a request when none is given).
func Check(req Request) (state.MessageType, error) {
	if strings.TrimSpace(req.Text) == "" {
		return "", fault.Usagef("the message is empty")
	}
	if len(req.Text) > MaxMessageBytes {
		return "", fault.Usagef("the message is %d bytes; at most %d fit in one message (write it to a file and send its path)", len(req.Text), MaxMessageBytes)
	}
	typ := req.Type
	if typ == "" {
		typ = state.MessageRequest
	}
	if !typ.Valid() {
		return "", fault.Usagef("unknown message type %q (want one of %s)", typ, typeList())
	}
	return typ, nil
}

func typeList() string {
	s := make([]string, len(state.MessageTypes))
	for i, t := range state.MessageTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// Posting is one message posted under the state lock: what it decided for
// each recipient, and which idle recipients this process starts delivering
// to. Set the fields above Outs, then run Post as (part of) an update.
type Posting struct {
	Req    Request
	Type   state.MessageType
	Sender string // the sending task's id; "" for the user (or As)
	// As names a sender that is no task (Sender ""): state.SenderRunner;
	// "" is state.SenderUser.
	As    string
	Alive map[string]bool // recipient → its pane lives (looked at before the lock)
	Now   time.Time
	Procs Procs // this process, and whether a task's supervisor runs

	Outs  []Outcome
	Start []string // idle recipients this process claimed for delivery
}

// Post decides for every recipient. It starts over from nothing each time
// it runs (an update function may run more than once). An idle recipient
// (done, nobody supervising it) is made ready and claimed by this process,
// which must then start its delivery (Start).
func (p *Posting) Post(st *state.State, targets []string) error {
	p.Outs, p.Start = p.Outs[:0], p.Start[:0]
	hops, root := 0, ""
	if p.Sender != "" {
		s := st.Task(p.Sender)
		if s == nil {
			return fault.Usagef("the sending task %s is gone (pruned)", p.Sender)
		}
		if len(s.Handling) > 0 {
			hops = s.HandlingHops + 1
		}
		root = st.Root(p.Sender)
	}
	for _, id := range targets {
		o := Outcome{To: id, Hops: hops}
		t := st.Task(id)
		if why := p.refusal(st, t, id, hops, root); why != "" {
			o.Result, o.Reason = Refused, why
		} else {
			p.queue(st, t, &o, hops, root)
		}
		if o.Result != Refused && !StartsTurn(p.from()) {
			// runner's own notice never starts a turn: it waits for
			// the next one someone starts (or reaches a working agent
			// through its CLI's hook, see runner/notice).
			if o.Result == Queued {
				o.Reason = fmt.Sprintf("a notice: it goes with the next turn of %s that someone starts (it is %s), or within a running one where its CLI's hook takes context", id, t.Status)
			}
		} else if o.Result != Refused && t.Status == state.StatusDone && (t.SupervisorPID == 0 || !p.Procs.Alive(t.SupervisorPID, t.SupervisorStart)) {
			// Idle, and nobody supervises it (a supervisor lets go of
			// the task in the update that records done, having looked
			// at the queue there): this process starts the delivery.
			_ = t.SetStatus(state.StatusReady, p.Now, "messages to deliver")
			t.SupervisorPID, t.SupervisorStart = p.Procs.Self()
			t.Ended = time.Time{}
			o.Result, o.Reason = Delivering, fmt.Sprintf("%s is idle: delivering now", id)
			p.Start = append(p.Start, id)
		}
		p.Outs = append(p.Outs, o)
	}
	return nil
}

// refusal says why a message to task t (id) cannot be taken, or "".
func (p *Posting) refusal(st *state.State, t *state.Task, id string, hops int, root string) string {
	switch {
	case t == nil:
		return fmt.Sprintf("task %s is gone (pruned)", id)
	case id == p.Sender:
		return "a task cannot message itself"
	case t.Status.IsTerminal() && t.Status != state.StatusDone:
		return fmt.Sprintf("task %s has ended (%s): messages cannot reach it", id, t.Status)
	case t.Status == state.StatusDone && !p.Alive[id]:
		return fmt.Sprintf("task %s is done and its agent's pane %s is gone", id, t.Tmux.Pane)
	case p.Req.MaxHops > 0 && hops > p.Req.MaxHops:
		return fmt.Sprintf("hop limit: this would be hop %d, past max_hops %d (a chain of replies between agents stops here)", hops, p.Req.MaxHops)
	case root != "" && p.Req.MaxPerRoot > 0 && st.RootMessages(root) >= p.Req.MaxPerRoot:
		return fmt.Sprintf("the tasks under %s have sent %d messages, the max_messages_per_root cap", root, p.Req.MaxPerRoot)
	}
	return ""
}

// queue puts the message in t's queue, merged into a pending one from the
// same sender and of the same type if there is one; a full queue refuses.
func (p *Posting) queue(st *state.State, t *state.Task, o *Outcome, hops int, root string) {
	id, text := t.ID, p.Req.Text
	from := p.from()
	if m := pendingFrom(st, id, from, p.Type); m != nil {
		// A repeat of a part already queued adds nothing.
		repeat := strings.Contains("\n\n"+m.Text+"\n\n", "\n\n"+text+"\n\n")
		if !repeat && len(m.Text)+len(text)+2 > MaxMessageBytes {
			o.Result, o.Reason = Refused, fmt.Sprintf("pending message %s from the same sender is full (%d bytes); wait until %s takes it", m.ID, len(m.Text), id)
			return
		}
		if !repeat {
			m.Text += "\n\n" + text
		}
		m.Merged++
		m.Hops = max(m.Hops, hops)
		o.ID, o.Result, o.Reason = m.ID, Merged, fmt.Sprintf("merged into pending %s", m.ID)
		return
	}
	if n := len(st.MessagesFor(id, state.MessagePending)); n >= MaxPendingPerTask {
		o.Result, o.Reason = Refused, fmt.Sprintf("the queue of %s is full (%d pending messages)", id, n)
		return
	}
	m := &state.Message{ID: st.NewMessageID(), From: from, To: id, Type: p.Type,
		Text: text, Hops: hops, Root: root, Status: state.MessagePending, Created: p.Now}
	st.AddMessage(m)
	o.ID, o.Result, o.Reason = m.ID, Queued, fmt.Sprintf("waits until %s is ready (it is %s)", id, t.Status)
}

// from is the message's From.
func (p *Posting) from() string {
	if p.Sender == "" && p.As != "" {
		return p.As
	}
	return SenderName(p.Sender)
}

func pendingFrom(st *state.State, to, from string, typ state.MessageType) *state.Message {
	for _, m := range st.MessagesFor(to, state.MessagePending) {
		if m.From == from && m.Type == typ {
			return m
		}
	}
	return nil
}

// SenderName is how a message names its sender: the task's id, or
// state.SenderUser for the user ("").
func SenderName(id string) string {
	if id == "" {
		return state.SenderUser
	}
	return id
}

// Sender returns the sending task's id ("" for the user) for from (a task
// id, "" or state.SenderUser).
func Sender(st *state.State, from string) (string, error) {
	if from == "" || from == state.SenderUser {
		return "", nil
	}
	t := st.Task(from)
	if t == nil {
		return "", fault.Usagef("the sending task %s (RUNNER_TASK_ID) is not in the state; was it pruned? (unset RUNNER_TASK_ID to send as the user)", from)
	}
	return t.ID, nil
}

// StartsTurn reports whether a message from sender starts a turn of an
// idle agent (or the next turn when the agent's turn ends): every
// message but runner's own notices (an overlap), which wait for a turn
// someone else starts (DESIGN: runner's notices never start a turn).
func StartsTurn(from string) bool { return from != state.SenderRunner }

// TurnMessages counts task id's pending messages that start a turn
// (StartsTurn).
func TurnMessages(st *state.State, id string) int {
	n := 0
	for _, m := range st.MessagesFor(id, state.MessagePending) {
		if StartsTurn(m.From) {
			n++
		}
	}
	return n
}

// ClaimNotices takes task id's pending notices (messages that do not
// start a turn) for a turn someone else starts, marked delivering by this
// process as Claim does; they are not what the agent is handling (their
// sender is runner, which takes no reply). Bounded as one delivery.
func ClaimNotices(st *state.State, id string, procs Procs) []*state.Message {
	self, _ := procs.Self()
	var batch []*state.Message
	size := 0
	for _, m := range st.MessagesFor(id, state.MessagePending) {
		if StartsTurn(m.From) {
			continue
		}
		if len(batch) == MaxBatchMessages || (len(batch) > 0 && size+len(m.Text) > MaxBatchBytes) {
			break
		}
		m.Status, m.ClaimedBy = state.MessageDelivering, self
		size += len(m.Text)
		c := *m
		batch = append(batch, &c)
	}
	return batch
}

// Claim takes the oldest pending messages of task id for one delivery by
// this process (bounded by MaxBatchMessages and MaxBatchBytes), marks them
// delivering, and makes them what the agent is handling (with the most
// hops among them). Messages left delivering by a supervisor that died are
// failed and returned as stale: they may or may not have been typed in,
// and are never typed twice. A task another supervisor took, or one that
// ended, gives no batch.
func Claim(st *state.State, id string, now time.Time, procs Procs) (batch, stale []*state.Message, err error) {
	t := st.Task(id)
	if t == nil {
		return nil, nil, fmt.Errorf("task %s: %w", id, state.ErrTaskNotFound)
	}
	self, _ := procs.Self()
	if t.SupervisorPID != self {
		// Another supervisor took the task: it delivers.
		return nil, nil, fmt.Errorf("task %s is supervised by process %d now, not %d", id, t.SupervisorPID, self)
	}
	if t.Status.IsTerminal() {
		return nil, nil, nil // cancelled meanwhile: nothing to deliver
	}
	stale = FailStaleClaims(st, id, now, "", procs)
	size, hops := 0, 0
	var ids []string
	for _, m := range st.MessagesFor(id, state.MessagePending) {
		if len(batch) == MaxBatchMessages || (len(batch) > 0 && size+len(m.Text) > MaxBatchBytes) {
			break
		}
		m.Status, m.ClaimedBy = state.MessageDelivering, self
		size += len(m.Text)
		hops = max(hops, m.Hops)
		ids = append(ids, m.ID)
		c := *m
		batch = append(batch, &c)
	}
	if len(batch) > 0 {
		t.Handling, t.HandlingHops = ids, hops
	}
	return batch, stale, nil
}

// Settle records how the delivery of a claimed batch went (delivered or
// failed), for the messages still delivering.
func Settle(st *state.State, batch []*state.Message, to state.MessageStatus, now time.Time, reason string) {
	for _, b := range batch {
		if m := st.Messages[b.ID]; m != nil && m.Status == state.MessageDelivering {
			m.SetMessageStatus(to, now, reason)
		}
	}
}
