package state

import (
	"sort"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// MessageIDPrefix starts every message id.
const MessageIDPrefix = "m_"

// MessageType says what a message between tasks is for.
type MessageType string

// The message types.
const (
	MessageRequest    MessageType = "request"    // asks the recipient to do or answer something
	MessageUpdate     MessageType = "update"     // tells the recipient about progress
	MessageResult     MessageType = "result"     // hands a result over
	MessageDependency MessageType = "dependency" // something the recipient waits for is ready
)

// MessageTypes lists the valid message types.
var MessageTypes = []MessageType{MessageRequest, MessageUpdate, MessageResult, MessageDependency}

// Valid reports whether t is one of MessageTypes.
func (t MessageType) Valid() bool {
	for _, v := range MessageTypes {
		if t == v {
			return true
		}
	}
	return false
}

// MessageStatus is where a message is on its way to the recipient.
type MessageStatus string

// The message statuses:
//
//	pending → delivering → delivered | failed
//	pending → dropped (the recipient ended without taking it)
const (
	MessagePending    MessageStatus = "pending"    // in the recipient's queue
	MessageDelivering MessageStatus = "delivering" // claimed by the recipient's supervisor, being typed in
	MessageDelivered  MessageStatus = "delivered"  // the agent took the prompt that carried it
	MessageFailed     MessageStatus = "failed"     // the prompt that carried it was not confirmed
	MessageDropped    MessageStatus = "dropped"    // the recipient ended (or was cancelled) first
)

// SenderUser is the From of a message sent from outside any task.
const SenderUser = "user"

// SenderRunner is the From of a message runner itself sends (an overlap:
// another task changed the recipient's files).
const SenderRunner = "runner"

// Message is one message between tasks (or from the user to a task). It
// waits in the recipient's queue until the recipient's agent is ready, then
// goes into its pane together with the other pending ones.
type Message struct {
	ID   string      `json:"id"`
	From string      `json:"from"` // a task id, SenderUser or SenderRunner
	To   string      `json:"to"`   // a task id
	Type MessageType `json:"type"`
	Text string      `json:"text"`
	// Hops counts how many delivered messages led to this one: 0 for a
	// message the sender wrote on its own, h+1 for one sent while
	// handling a message with h hops.
	Hops int `json:"hops"`
	// Root is the root task of the sender's lineage ("" for the user);
	// the per-root cap counts against it.
	Root string `json:"root,omitempty"`
	// Merged counts the repeats merged into this pending message (same
	// sender, recipient and type).
	Merged int           `json:"merged,omitempty"`
	Status MessageStatus `json:"status"`
	// Reason says why a message failed or was dropped.
	Reason    string    `json:"reason,omitempty"`
	Created   time.Time `json:"created"`
	Delivered time.Time `json:"delivered,omitzero"` // when it was delivered, failed or dropped
	// ClaimedBy is the supervisor pid that is delivering it.
	ClaimedBy int `json:"claimed_by,omitempty"`
}

// NewMessageID returns a fresh message id, "m_" followed by 8 lowercase
// alphanumerics, not already in s.Messages. Call it inside Update.
func (s *State) NewMessageID() string {
	for {
		id := MessageIDPrefix + strings.TrimPrefix(newID(), TaskIDPrefix)
		if _, taken := s.Messages[id]; !taken {
			return id
		}
	}
}

// ValidMessageID reports whether id has the shape of a message id.
func ValidMessageID(id string) bool {
	rest, ok := strings.CutPrefix(id, MessageIDPrefix)
	return ok && ValidTaskID(TaskIDPrefix+rest)
}

// AddMessage stores m, creating the map when needed.
func (s *State) AddMessage(m *Message) {
	if s.Messages == nil {
		s.Messages = map[string]*Message{}
	}
	s.Messages[m.ID] = m
}

// MessagesFor returns the messages to task id in the given statuses (all
// statuses when none is given), oldest first.
func (s *State) MessagesFor(id string, statuses ...MessageStatus) []*Message {
	return s.messages(func(m *Message) bool {
		if m.To != id {
			return false
		}
		if len(statuses) == 0 {
			return true
		}
		for _, st := range statuses {
			if m.Status == st {
				return true
			}
		}
		return false
	})
}

// MessagesOf returns the messages to or from task id, oldest first.
func (s *State) MessagesOf(id string) []*Message {
	return s.messages(func(m *Message) bool { return m.To == id || m.From == id })
}

// MessageList returns every message, oldest first.
func (s *State) MessageList() []*Message {
	return s.messages(func(*Message) bool { return true })
}

func (s *State) messages(keep func(*Message) bool) []*Message {
	var out []*Message
	for _, m := range s.Messages {
		if keep(m) {
			out = append(out, m)
		}
	}
	sortMessages(out)
	return out
}

func sortMessages(out []*Message) {
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
}

// Root returns the root of task id's lineage (the task itself when it has
// no parent). A parent that was pruned ends the walk; a cycle (which
// dispatch cannot create) is cut.
func (s *State) Root(id string) string {
	seen := map[string]bool{}
	for {
		t := s.lookup(id)
		if t == nil || t.Parent == "" || seen[id] {
			return id
		}
		seen[id] = true
		if s.lookup(t.Parent) == nil {
			return t.Parent
		}
		id = t.Parent
	}
}

// SetMessageStatus moves m to status st at time at, with reason.
func (m *Message) SetMessageStatus(st MessageStatus, at time.Time, reason string) {
	m.Status = st
	m.Reason = reason
	if st != MessagePending && st != MessageDelivering {
		m.Delivered = at
		m.ClaimedBy = 0
	}
}

// pruneMessages removes the finished messages (not pending or
// delivering) that ended before cutoff (none for a zero cutoff), and marks
// dropped the open ones whose recipient left the index: archived or pruned
// tasks have ended, and nothing will deliver to them.
func pruneMessages(st *State, cutoff time.Time) {
	for id, m := range st.Messages {
		if finishedMessage(m) {
			if !cutoff.IsZero() && !m.Delivered.IsZero() && m.Delivered.Before(cutoff) {
				delete(st.Messages, id)
			}
			continue
		}
		if _, ok := st.Tasks[m.To]; !ok {
			m.SetMessageStatus(MessageDropped, clock.Now().UTC(), "the recipient "+m.To+" has ended")
		}
	}
}

// DropPending marks every pending message to task id dropped, with reason,
// and returns them.
func (s *State) DropPending(id string, at time.Time, reason string) []*Message {
	msgs := s.MessagesFor(id, MessagePending)
	for _, m := range msgs {
		m.SetMessageStatus(MessageDropped, at, reason)
	}
	return msgs
}
