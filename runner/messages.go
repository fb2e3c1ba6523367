package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/exit"

	"github.com/runner-cli/runner/state"
)

// Limits on messages between tasks. The hop limit and the per-root cap come
// from the config (max_hops, max_messages_per_root).
const (
	// MaxMessageBytes bounds one message's text, merged repeats included.
	MaxMessageBytes = 32 << 10
	// MaxPendingPerTask bounds a task's queue of pending messages.
	MaxPendingPerTask = 32
	// maxBatchMessages and maxBatchBytes bound one delivery; the rest
	// waits for the next ready point.
	maxBatchMessages = 16
	maxBatchBytes    = 48 << 10
)

// MessageRequest is one `runner msg`.
type MessageRequest struct {
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

// MessageOutcome is what happened to a message for one recipient.
type MessageOutcome struct {
	To     string `json:"to"`
	ID     string `json:"id,omitempty"`
	Result string `json:"result"` // queued, delivering, merged or refused
	Hops   int    `json:"hops"`
	// Reason says why it was refused, or where it waits.
	Reason string `json:"reason,omitempty"`
}

// The MessageOutcome results.
const (
	MsgQueued     = "queued"     // waits until the recipient's turn ends
	MsgDelivering = "delivering" // the recipient was idle: a supervisor is typing it in now
	MsgMerged     = "merged"     // merged into a pending message from the same sender and of the same type
	MsgRefused    = "refused"    // not accepted (see Reason)
)

// MessageRefusedError is returned when a message was refused for at least
// one recipient. It wraps ErrUsage (exit 2).
type MessageRefusedError struct{ Refused []MessageOutcome }

func (e *MessageRefusedError) Error() string {
	var b strings.Builder
	for i, o := range e.Refused {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "message to %s refused: %s", o.To, o.Reason)
	}
	return b.String()
}

// Is makes the error match ErrUsage.
func (e *MessageRefusedError) Is(target error) bool { return target == exit.ErrUsage }

// PostMessage puts a message in the queue of each recipient. A recipient
// whose agent is idle (its task is done and nobody supervises it) gets a
// supervisor that delivers the queue at once; a busy one gets it when its
// turn ends. Loop protection refuses a message past MaxHops, past
// MaxPerRoot messages in the sender's tree, or past a full queue, and a
// repeat (same sender, recipient and type) is merged into the pending one.
// Every acceptance and refusal goes to the journal. If any recipient
// refused, the error is a *MessageRefusedError (the outcomes still list
// every recipient).
func PostMessage(ctx context.Context, env *Env, req MessageRequest) ([]MessageOutcome, error) {
	typ, err := checkMessage(req)
	if err != nil {
		return nil, err
	}
	// Which recipients are idle is known only under the lock; whether
	// their panes live needs tmux, which must not run under it: look
	// first, then decide under the lock.
	pre, panes, err := reconcile(ctx, env, true)
	if err != nil {
		return nil, err
	}
	from := req.From
	if from == "" {
		from = callerTaskIn(ctx, env, pre, panes)
	}
	sender, err := messageSender(pre, from)
	if err != nil {
		return nil, err
	}
	targets, err := resolveRecipients(pre, sender, req.To)
	if err != nil {
		return nil, err
	}
	// Any target may be done by the time the lock is taken: know all
	// their panes.
	p := &posting{req: req, typ: typ, sender: sender, alive: map[string]bool{}, now: env.now()}
	live := map[string]bool{}
	for _, pn := range panes {
		live[pn.ID] = !pn.Dead
	}
	for _, id := range targets {
		t := pre.Task(id)
		switch {
		case t == nil:
		case t.Tmux.Host != "":
			// Its pane is on a host: ask there (for a done task only, the
			// one case the answer decides).
			if t.Status == state.StatusDone {
				p.alive[id] = env.remotePaneAlive(ctx, t)
			}
		default:
			p.alive[id] = live[t.Tmux.Pane]
		}
	}
	if err := env.Store.Update(ctx, func(st *state.State) error { return p.post(st, targets) }); err != nil {
		return nil, err
	}
	var refused []MessageOutcome
	for _, o := range p.outs {
		if o.Result == MsgRefused {
			refused = append(refused, o)
		}
		m := &state.Message{ID: o.ID, From: senderName(sender), To: o.To, Type: typ, Hops: o.Hops}
		env.journalMessage(ctx, p.now, o.Result, m, o.Reason)
	}
	errs := env.startDeliveries(ctx, p.start)
	if len(refused) > 0 {
		errs = append(errs, &MessageRefusedError{Refused: refused})
	}
	return p.outs, errors.Join(errs...)
}

// checkMessage refuses an empty or oversized message or an unknown type,
// and returns the type (a request when none is given).
func checkMessage(req MessageRequest) (state.MessageType, error) {
	if strings.TrimSpace(req.Text) == "" {
		return "", exit.Usagef("the message is empty")
	}
	if len(req.Text) > MaxMessageBytes {
		return "", exit.Usagef("the message is %d bytes; at most %d fit in one message (write it to a file and send its path)", len(req.Text), MaxMessageBytes)
	}
	typ := req.Type
	if typ == "" {
		typ = state.MessageRequest
	}
	if !typ.Valid() {
		return "", exit.Usagef("unknown message type %q (want one of %s)", typ, messageTypeList())
	}
	return typ, nil
}

// posting is one PostMessage under the state lock: what it decided for
// each recipient, and which idle recipients this process starts
// delivering to.
type posting struct {
	req    MessageRequest
	typ    state.MessageType
	sender string
	alive  map[string]bool // recipient → its pane lives
	now    time.Time

	outs  []MessageOutcome
	start []string // idle recipients this process claimed for delivery
}

// post decides for every recipient (an Update function: it starts over
// from nothing each time it runs).
func (p *posting) post(st *state.State, targets []string) error {
	p.outs, p.start = p.outs[:0], p.start[:0]
	hops, root := 0, ""
	if p.sender != "" {
		s := st.Task(p.sender)
		if s == nil {
			return exit.Usagef("the sending task %s is gone (pruned)", p.sender)
		}
		if len(s.Handling) > 0 {
			hops = s.HandlingHops + 1
		}
		root = st.Root(p.sender)
	}
	for _, id := range targets {
		o := MessageOutcome{To: id, Hops: hops}
		t := st.Task(id)
		if why := p.refusal(st, t, id, hops, root); why != "" {
			o.Result, o.Reason = MsgRefused, why
		} else {
			p.queue(st, t, &o, hops, root)
		}
		if o.Result != MsgRefused && t.Status == state.StatusDone && (t.SupervisorPID == 0 || !processAlive(t.SupervisorPID)) {
			// Idle, and nobody supervises it (a supervisor that has just
			// recorded done looks at the queue once more before it
			// lets go): this process starts the delivery.
			_ = t.SetStatus(state.StatusReady, p.now, "messages to deliver")
			t.SupervisorPID = os.Getpid()
			t.Ended = time.Time{}
			o.Result, o.Reason = MsgDelivering, fmt.Sprintf("%s is idle: delivering now", id)
			p.start = append(p.start, id)
		}
		p.outs = append(p.outs, o)
	}
	return nil
}

// refusal says why a message to task t (id) cannot be taken, or "".
func (p *posting) refusal(st *state.State, t *state.Task, id string, hops int, root string) string {
	switch {
	case t == nil:
		return fmt.Sprintf("task %s is gone (pruned)", id)
	case id == p.sender:
		return "a task cannot message itself"
	case t.Status.IsTerminal() && t.Status != state.StatusDone:
		return fmt.Sprintf("task %s has ended (%s): messages cannot reach it", id, t.Status)
	case t.Status == state.StatusDone && !p.alive[id]:
		return fmt.Sprintf("task %s is done and its agent's pane %s is gone", id, t.Tmux.Pane)
	case p.req.MaxHops > 0 && hops > p.req.MaxHops:
		return fmt.Sprintf("hop limit: this would be hop %d, past max_hops %d (a chain of replies between agents stops here)", hops, p.req.MaxHops)
	case root != "" && p.req.MaxPerRoot > 0 && countRoot(st, root) >= p.req.MaxPerRoot:
		return fmt.Sprintf("the tasks under %s have sent %d messages, the max_messages_per_root cap", root, p.req.MaxPerRoot)
	}
	return ""
}

// queue puts the message in t's queue, merged into a pending one from the
// same sender and of the same type if there is one; a full queue refuses.
func (p *posting) queue(st *state.State, t *state.Task, o *MessageOutcome, hops int, root string) {
	id, text := t.ID, p.req.Text
	if m := pendingFrom(st, id, senderName(p.sender), p.typ); m != nil {
		// A repeat of a part already queued adds nothing.
		repeat := strings.Contains("\n\n"+m.Text+"\n\n", "\n\n"+text+"\n\n")
		if !repeat && len(m.Text)+len(text)+2 > MaxMessageBytes {
			o.Result, o.Reason = MsgRefused, fmt.Sprintf("pending message %s from the same sender is full (%d bytes); wait until %s takes it", m.ID, len(m.Text), id)
			return
		}
		if !repeat {
			m.Text += "\n\n" + text
		}
		m.Merged++
		m.Hops = max(m.Hops, hops)
		o.ID, o.Result, o.Reason = m.ID, MsgMerged, fmt.Sprintf("merged into pending %s", m.ID)
		return
	}
	if n := len(st.MessagesFor(id, state.MessagePending)); n >= MaxPendingPerTask {
		o.Result, o.Reason = MsgRefused, fmt.Sprintf("the queue of %s is full (%d pending messages)", id, n)
		return
	}
	m := &state.Message{ID: st.NewMessageID(), From: senderName(p.sender), To: id, Type: p.typ,
		Text: text, Hops: hops, Root: root, Status: state.MessagePending, Created: p.now}
	st.AddMessage(m)
	o.ID, o.Result, o.Reason = m.ID, MsgQueued, fmt.Sprintf("waits until %s is ready (it is %s)", id, t.Status)
}

// startDeliveries starts a supervisor for each idle recipient this process
// claimed; one that cannot start puts its task back to done (the message
// stays queued) and is reported.
func (env *Env) startDeliveries(ctx context.Context, ids []string) []error {
	var errs []error
	for _, id := range ids {
		if _, err := env.StartSupervisor(id, nil); err != nil {
			reason := "could not start a supervisor to deliver messages: " + err.Error()
			_ = env.updateDurably(context.WithoutCancel(ctx), "task "+id+": "+reason, func(st *state.State) error {
				if t := st.Task(id); t != nil && t.Status == state.StatusReady && t.SupervisorPID == os.Getpid() {
					_ = t.SetStatus(state.StatusDone, env.now(), reason)
					t.SupervisorPID = 0
				}
				return nil
			})
			errs = append(errs, fmt.Errorf("message to %s: %s (it stays queued; the next message or 'runner send' retries)", id, reason))
		}
	}
	return errs
}

// journalMessage writes the journal line of one step of a message:
// kind "queued", "delivered", "refused"…, and the line
// "ID from FROM to TO (TYPE, hop N)[: reason]" ("-" for a message refused
// before it had an id).
func (env *Env) journalMessage(ctx context.Context, at time.Time, kind string, m *state.Message, reason string) {
	id := m.ID
	if id == "" {
		id = "-"
	}
	text := fmt.Sprintf("%s from %s to %s (%s, hop %d)", id, m.From, m.To, m.Type, m.Hops)
	if reason != "" {
		text += ": " + reason
	}
	_ = env.Store.Journal(ctx, state.Event{Time: at, Kind: "msg-" + kind, Task: m.To, Message: text})
}
func messageTypeList() string {
	s := make([]string, len(state.MessageTypes))
	for i, t := range state.MessageTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

func senderName(id string) string {
	if id == "" {
		return state.SenderUser
	}
	return id
}

// messageSender returns the sending task's id ("" for the user).
func messageSender(st *state.State, from string) (string, error) {
	if from == "" || from == state.SenderUser {
		return "", nil
	}
	t := st.Task(from)
	if t == nil {
		return "", exit.Usagef("the sending task %s (RUNNER_TASK_ID) is not in the state; was it pruned? (unset RUNNER_TASK_ID to send as the user)", from)
	}
	return t.ID, nil
}

// countRoot counts the messages sent under lineage root, the archived
// ones too.
func countRoot(st *state.State, root string) int { return st.RootMessages(root) }

func pendingFrom(st *state.State, to, from string, typ state.MessageType) *state.Message {
	for _, m := range st.MessagesFor(to, state.MessagePending) {
		if m.From == from && m.Type == typ {
			return m
		}
	}
	return nil
}
