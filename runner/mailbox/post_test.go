package mailbox

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/open"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// msgEnv is the Deps of an Env whose tmux server does not exist (no pane
// is alive) and whose tasks are "supervised" by this test process, so
// runner.Reconcile leaves them as they are; built as cmd/runner builds it.
func msgEnv(t *testing.T, tasks ...*state.Task) Deps {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "nosrv")
	env := &runner.Env{Store: statetest.WithTasks(t, tasks...), TC: tmuxctl.New(sock), Getenv: func(string) string { return "" }}
	return Deps{
		Store: env.Store, Record: env.Record(), Now: env.Time,
		Core: open.Core{Env: env},
	}
}

func TestPostMessageRules(t *testing.T) {
	root := statetest.Supervised("t_root0000", "", state.StatusRunning)
	kid1 := statetest.Supervised("t_kid10000", "t_root0000", state.StatusRunning)
	kid2 := statetest.Supervised("t_kid20000", "t_root0000", state.StatusQueued)
	kid3 := statetest.Supervised("t_kid30000", "t_root0000", state.StatusNeedsInput)
	gone := statetest.Supervised("t_gone0000", "t_root0000", state.StatusExited)
	idle := statetest.Supervised("t_idle0000", "", state.StatusDone) // done, but its pane is gone
	other := statetest.Supervised("t_othr0000", "", state.StatusRunning)
	other.Project = "web"

	tests := []struct {
		name    string
		from    string
		to      string
		hops    int // the sender's HandlingHops (-1: not handling)
		want    []string
		refused string
	}{
		{name: "user to a busy task", to: "t_kid1", hops: -1, want: []string{"t_kid10000:queued:0"}},
		{name: "user to a queued task", to: "t_kid20000", hops: -1, want: []string{"t_kid20000:queued:0"}},
		{name: "to a task waiting for input", to: "t_kid30000", hops: -1, want: []string{"t_kid30000:queued:0"}},
		{name: "child to parent", from: "t_kid10000", to: "@parent", hops: -1, want: []string{"t_root0000:queued:0"}},
		{name: "siblings skip ended ones and the sender", from: "t_kid10000", to: "@siblings", hops: -1,
			want: []string{"t_kid20000:queued:0", "t_kid30000:queued:0"}},
		{name: "project room skips the sender", from: "t_root0000", to: "@project:api", hops: -1,
			want: []string{"t_kid10000:queued:0", "t_kid20000:queued:0", "t_kid30000:queued:0"}},
		{name: "a reply carries hops+1", from: "t_kid10000", to: "@parent", hops: 3, want: []string{"t_root0000:queued:4"}},
		{name: "the last hop allowed", from: "t_kid10000", to: "@parent", hops: 7, want: []string{"t_root0000:queued:8"}},
		{name: "past max_hops", from: "t_kid10000", to: "@parent", hops: 8, refused: "hop limit: this would be hop 9"},
		{name: "to itself", from: "t_kid10000", to: "t_kid10000", hops: -1, refused: "cannot message itself"},
		{name: "to an ended task", to: "t_gone0000", hops: -1, refused: "has ended (exited)"},
		{name: "to an idle task whose pane is gone", to: "t_idle0000", hops: -1, refused: "pane %999 is gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := msgEnv(t, root, kid1, kid2, kid3, gone, idle, other)
			if tt.from != "" && tt.hops >= 0 {
				_ = env.Store.Update(t.Context(), func(st *state.State) error {
					st.Tasks[tt.from].Handling = []string{"m_prev0000"}
					st.Tasks[tt.from].HandlingHops = tt.hops
					return nil
				})
			}
			outs, err := Post(t.Context(), env, Request{From: tt.from, To: tt.to, Text: "hello", MaxHops: 8, MaxPerRoot: 200})
			if tt.refused != "" {
				var re *RefusedError
				if !errors.As(err, &re) || !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("Post = %v, %v; want a refusal %q", outs, err, tt.refused)
				}
				if n := len(statetest.Read(t, env.Store.(*state.Store)).Messages); n != 0 {
					t.Errorf("a refused message was stored (%d messages)", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Post: %v", err)
			}
			var got []string
			for _, o := range outs {
				got = append(got, o.To+":"+o.Result+":"+strconv.Itoa(o.Hops))
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("outcomes %v, want %v", got, tt.want)
			}
			st := statetest.Read(t, env.Store.(*state.Store))
			for _, o := range outs {
				m := st.Messages[o.ID]
				if m == nil || m.Status != state.MessagePending || m.To != o.To || !state.ValidMessageID(m.ID) {
					t.Errorf("stored message for %s: %+v", o.To, m)
				}
				if tt.from != "" && m != nil && m.Root != "t_root0000" {
					t.Errorf("message root %q, want t_root0000", m.Root)
				}
			}
		})
	}
}

func TestPostMessageBadInput(t *testing.T) {
	env := msgEnv(t, statetest.Supervised("t_aaaa0000", "", state.StatusRunning))
	for _, req := range []Request{
		{To: "t_aaaa0000", Text: "  \n"},
		{To: "t_aaaa0000", Text: "x", Type: "gossip"},
		{To: "t_zzzz", Text: "x"},
		{To: "@parent", Text: "x"},
		{To: "@siblings", Text: "x"},
		{To: "@project:nope", Text: "x"},
		{To: "@everyone", Text: "x"},
		{To: "t_aaaa0000", Text: strings.Repeat("x", MaxMessageBytes+1)},
		{To: "t_aaaa0000", Text: "x", From: "t_ghost000"},
	} {
		outs, err := Post(t.Context(), env, req)
		if !errors.Is(err, fault.ErrUsage) || outs != nil {
			t.Errorf("Post(to %q, type %q, from %q) = %v, %v; want a usage error", req.To, req.Type, req.From, outs, err)
		}
	}
	if st := statetest.Read(t, env.Store.(*state.Store)); len(st.Messages) != 0 {
		t.Errorf("bad input stored messages: %v", st.Messages)
	}
}

func TestPostMessageMergeAndCaps(t *testing.T) {
	root := statetest.Supervised("t_root0000", "", state.StatusRunning)
	kid := statetest.Supervised("t_kid10000", "t_root0000", state.StatusRunning)
	kid2 := statetest.Supervised("t_kid20000", "t_root0000", state.StatusRunning)
	env := msgEnv(t, root, kid, kid2)
	post := func(from, to string, typ state.MessageType, text string, perRoot int) ([]Outcome, error) {
		return Post(t.Context(), env, Request{From: from, To: to, Type: typ, Text: text, MaxHops: 8, MaxPerRoot: perRoot})
	}
	// A repeat from the same sender and of the same type merges.
	o1, err := post("t_kid10000", "t_root0000", state.MessageResult, "part 1", 5)
	if err != nil {
		t.Fatal(err)
	}
	o2, err := post("t_kid10000", "t_root0000", state.MessageResult, "part 2", 5)
	if err != nil || o2[0].Result != MsgMerged || o2[0].ID != o1[0].ID {
		t.Fatalf("repeat = %v, %v; want merged into %s", o2, err, o1[0].ID)
	}
	if _, err := post("t_kid10000", "t_root0000", state.MessageResult, "part 2", 5); err != nil {
		t.Fatal(err)
	}
	m := statetest.Read(t, env.Store.(*state.Store)).Messages[o1[0].ID]
	if m.Text != "part 1\n\npart 2" || m.Merged != 2 {
		t.Errorf("merged message %q (merged %d); want both parts once and merged 2", m.Text, m.Merged)
	}
	// Another type or sender is a message of its own.
	if o, err := post("t_kid10000", "t_root0000", state.MessageUpdate, "u", 5); err != nil || o[0].Result != MsgQueued {
		t.Fatalf("other type = %v, %v", o, err)
	}
	// The tree's cap (5) counts merged repeats: 3 + 1 so far.
	if _, err := post("t_kid20000", "t_root0000", state.MessageUpdate, "u", 5); err != nil {
		t.Fatal(err)
	}
	_, err = post("t_kid20000", "t_kid10000", state.MessageRequest, "one too many", 5)
	if err == nil || !strings.Contains(err.Error(), "max_messages_per_root") {
		t.Fatalf("past the per-root cap: %v", err)
	}
	// A full queue refuses.
	_ = env.Store.Update(t.Context(), func(st *state.State) error {
		for i := range MaxPendingPerTask {
			id := st.NewMessageID()
			st.AddMessage(&state.Message{ID: id, From: "t_other" + strconv.Itoa(i%10), To: "t_kid20000", Type: state.MessageUpdate,
				Text: "x", Status: state.MessagePending, Created: clock.Now()})
		}
		return nil
	})
	_, err = post("", "t_kid20000", state.MessageRequest, "no room", 0)
	if err == nil || !strings.Contains(err.Error(), "queue of t_kid20000 is full") {
		t.Fatalf("full queue: %v", err)
	}
	// A merge that would pass the size limit refuses.
	big := strings.Repeat("y", MaxMessageBytes-3)
	if _, err := post("", "t_root0000", state.MessageDependency, big, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := post("", "t_root0000", state.MessageDependency, "more", 0); err == nil || !strings.Contains(err.Error(), "is full") {
		t.Fatalf("oversized merge: %v", err)
	}
	// Refusals are journaled.
	events, _, err := env.Store.(*state.Store).ReadJournal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	refusals := 0
	for _, e := range events {
		if e.Kind == "msg-refused" {
			refusals++
		}
	}
	if refusals != 3 {
		t.Errorf("journal has %d msg-refused events, want 3", refusals)
	}
}
