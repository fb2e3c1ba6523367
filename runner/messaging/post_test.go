package messaging

import (
	"errors"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// The rules a message meets, on a state in memory: each case posts one
// message and looks at the outcome for the one recipient.
func TestPostRules(t *testing.T) {
	full := strings.Repeat("x", MaxMessageBytes-2)
	for _, tc := range []struct {
		name    string
		req     Request
		sender  string
		as      string // a sender that is no task (state.SenderRunner)
		to      string
		alive   bool
		setup   func(st *state.State)
		result  string
		reason  string
		pending int // the recipient's pending messages after
	}{
		{name: "queued for a busy task", to: "t_b", result: Queued, reason: "waits until t_b is ready", pending: 1},
		{name: "a task cannot message itself", sender: "t_b", to: "t_b", result: Refused, reason: "cannot message itself"},
		{name: "ended other than done", to: "t_x", result: Refused, reason: "has ended (failed)"},
		{name: "done with its pane gone", to: "t_d", result: Refused, reason: "pane %9 is gone"},
		{name: "done and idle: this process delivers", to: "t_d", alive: true, result: Delivering, pending: 1},
		// runner's notice never starts a turn: queued for an idle agent,
		// which stays done and unclaimed.
		{name: "runner's notice to an idle task waits", as: state.SenderRunner, to: "t_d", alive: true, result: Queued, reason: "next turn of t_d that someone starts", pending: 1},
		{name: "runner's notice to a busy task", as: state.SenderRunner, to: "t_b", result: Queued, reason: "within a running one", pending: 1},
		{name: "past the hop limit", sender: "t_h", to: "t_b", req: Request{MaxHops: 2}, result: Refused, reason: "hop 3, past max_hops 2"},
		{name: "the tree's cap", sender: "t_h", to: "t_b", req: Request{MaxPerRoot: 1},
			setup: func(st *state.State) {
				st.AddMessage(&state.Message{ID: "m_1", From: "t_h", To: "t_x", Root: "t_r", Status: state.MessageDelivered})
			}, result: Refused, reason: "max_messages_per_root"},
		{name: "a repeat merges", to: "t_b",
			setup: func(st *state.State) {
				st.AddMessage(&state.Message{ID: "m_p", From: state.SenderUser, To: "t_b", Type: state.MessageRequest, Text: "hello", Status: state.MessagePending})
			}, result: Merged, reason: "merged into pending m_p", pending: 1},
		{name: "a merge past the size refuses", to: "t_b",
			setup: func(st *state.State) {
				st.AddMessage(&state.Message{ID: "m_p", From: state.SenderUser, To: "t_b", Type: state.MessageRequest, Text: full, Status: state.MessagePending})
			}, result: Refused, reason: "is full", pending: 1},
		{name: "a full queue refuses", to: "t_b",
			setup: func(st *state.State) {
				for i := range MaxPendingPerTask {
					st.AddMessage(&state.Message{ID: st.NewMessageID(), From: "t_" + string(rune('a'+i%26)) + string(rune('a'+i/26)), To: "t_b",
						Type: state.MessageRequest, Text: "q", Status: state.MessagePending})
				}
			}, result: Refused, reason: "queue of t_b is full", pending: MaxPendingPerTask},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := state.New()
			st.Tasks["t_r"] = &state.Task{ID: "t_r", Status: state.StatusRunning}
			st.Tasks["t_b"] = &state.Task{ID: "t_b", Status: state.StatusRunning}
			st.Tasks["t_x"] = &state.Task{ID: "t_x", Status: state.StatusFailed}
			st.Tasks["t_d"] = &state.Task{ID: "t_d", Status: state.StatusDone, Tmux: state.TmuxTarget{Pane: "%9"}}
			// t_h is handling a message of hop 2, under t_r.
			st.Tasks["t_h"] = &state.Task{ID: "t_h", Parent: "t_r", Status: state.StatusRunning, Handling: []string{"m_0"}, HandlingHops: 2}
			if tc.setup != nil {
				tc.setup(st)
			}
			req := tc.req
			req.To, req.Text = tc.to, "hello"
			typ, err := Check(req)
			if err != nil {
				t.Fatal(err)
			}
			p := &Posting{Req: req, Type: typ, Sender: tc.sender, As: tc.as, Alive: map[string]bool{tc.to: tc.alive}, Procs: fakeProcs{self: 7}}
			if err := p.Post(st, []string{tc.to}); err != nil {
				t.Fatal(err)
			}
			o := p.Outs[0]
			if o.Result != tc.result || !strings.Contains(o.Reason, tc.reason) {
				t.Errorf("%s (%s), want %s (%s)", o.Result, o.Reason, tc.result, tc.reason)
			}
			if n := len(st.MessagesFor(tc.to, state.MessagePending)); n != tc.pending {
				t.Errorf("%d pending, want %d", n, tc.pending)
			}
			if d := st.Task(tc.to); (tc.result == Delivering) != (len(p.Start) == 1) ||
				(tc.result == Delivering && (d.Status != state.StatusReady || d.SupervisorPID != 7)) {
				t.Errorf("start %v, recipient %s by %d: an idle recipient is claimed by this process, no other", p.Start, d.Status, d.SupervisorPID)
			}
			if d := st.Task(tc.to); tc.as == state.SenderRunner && (d.SupervisorPID != 0 || (d.ID == "t_d" && d.Status != state.StatusDone)) {
				t.Errorf("a notice took %s: %s by %d", d.ID, d.Status, d.SupervisorPID)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	for _, req := range []Request{{Text: "  \n"}, {Text: strings.Repeat("x", MaxMessageBytes+1)}, {Text: "x", Type: "gossip"}} {
		if _, err := Check(req); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("Check(%.20q, %q) = %v, want a usage error", req.Text, req.Type, err)
		}
	}
	if typ, err := Check(Request{Text: "x"}); err != nil || typ != state.MessageRequest {
		t.Errorf("the default type: %q, %v", typ, err)
	}
}

// Claim takes the oldest pending messages up to the batch bounds, and
// fails what a dead supervisor left delivering.
func TestClaim(t *testing.T) {
	st := state.New()
	procs := fakeProcs{self: 7, live: map[int]bool{7: true}}
	st.Tasks["t_a"] = &state.Task{ID: "t_a", Status: state.StatusReady, SupervisorPID: 7}
	st.AddMessage(&state.Message{ID: "m_dead", To: "t_a", Text: "old", Status: state.MessageDelivering, ClaimedBy: 1 << 22})
	for i := range MaxBatchMessages + 3 {
		st.AddMessage(&state.Message{ID: st.NewMessageID(), To: "t_a", Text: "n", Hops: i % 4, Status: state.MessagePending})
	}
	batch, stale, err := Claim(st, "t_a", awNow, procs)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != MaxBatchMessages || len(stale) != 1 || stale[0].ID != "m_dead" {
		t.Fatalf("batch %d, stale %v", len(batch), stale)
	}
	if a := st.Task("t_a"); len(a.Handling) != MaxBatchMessages || a.HandlingHops != 3 {
		t.Errorf("handling %d, hops %d", len(a.Handling), a.HandlingHops)
	}
	Settle(st, batch, state.MessageDelivered, awNow, "")
	if n := len(st.MessagesFor("t_a", state.MessageDelivered)); n != MaxBatchMessages {
		t.Errorf("%d delivered", n)
	}
	st.Tasks["t_a"].SupervisorPID = 1
	if _, _, err := Claim(st, "t_a", awNow, procs); err == nil || !strings.Contains(err.Error(), "supervised by process 1") {
		t.Errorf("claim of a task another supervisor took: %v", err)
	}
}

// fakeProcs is messaging's view of processes in memory: this one is self,
// and those in live run.
type fakeProcs struct {
	self int
	live map[int]bool
}

func (f fakeProcs) Self() (int, string)          { return f.self, "" }
func (f fakeProcs) Alive(pid int, _ string) bool { return pid == f.self || f.live[pid] }

// runner's notices do not count as messages that start a turn, and go
// with a turn someone else starts (ClaimNotices) without becoming what the
// agent handles.
func TestNotices(t *testing.T) {
	st := state.New()
	st.Tasks["t_d"] = &state.Task{ID: "t_d", Status: state.StatusDone}
	st.AddMessage(&state.Message{ID: "m_n", From: state.SenderRunner, To: "t_d", Type: state.MessageUpdate, Text: "overlap", Status: state.MessagePending})
	if n := TurnMessages(st, "t_d"); n != 0 {
		t.Fatalf("a notice alone: %d messages that start a turn, want 0", n)
	}
	st.AddMessage(&state.Message{ID: "m_u", From: state.SenderUser, To: "t_d", Type: state.MessageRequest, Text: "hi", Status: state.MessagePending})
	if n := TurnMessages(st, "t_d"); n != 1 {
		t.Fatalf("with the user's: %d, want 1", n)
	}
	batch := ClaimNotices(st, "t_d", fakeProcs{self: 7})
	if len(batch) != 1 || batch[0].ID != "m_n" {
		t.Fatalf("claimed %v, want the notice alone", batch)
	}
	if m := st.Messages["m_n"]; m.Status != state.MessageDelivering || m.ClaimedBy != 7 {
		t.Errorf("the notice is %s by %d, want delivering by 7", m.Status, m.ClaimedBy)
	}
	if m := st.Messages["m_u"]; m.Status != state.MessagePending {
		t.Errorf("the user's message is %s, want pending", m.Status)
	}
	if len(st.Tasks["t_d"].Handling) != 0 {
		t.Errorf("handling %v: a notice takes no reply", st.Tasks["t_d"].Handling)
	}
}
