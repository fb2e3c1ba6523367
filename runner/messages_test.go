package runner

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/supervisor"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// msgEnv is an Env whose tmux server does not exist (no pane is alive) and
// whose tasks are "supervised" by this test process, so Reconcile leaves
// them as they are.
func msgEnv(t *testing.T, tasks ...*state.Task) *Env {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "nosrv")
	return &Env{Store: statetest.WithTasks(t, tasks...), TC: tmuxctl.New(sock), Getenv: func(string) string { return "" }}
}

func TestClaimMessages(t *testing.T) {
	a := statetest.Supervised("t_aaaa0000", "", state.StatusRunning)
	env := msgEnv(t, a)
	now := clock.Now()
	_ = env.Store.Update(t.Context(), func(st *state.State) error {
		// One left delivering by a supervisor that died, then 20 pending.
		st.AddMessage(&state.Message{ID: "m_stale000", From: "user", To: a.ID, Type: state.MessageUpdate, Text: "old",
			Status: state.MessageDelivering, ClaimedBy: 1 << 22, Created: now.Add(-time.Hour)})
		for i := range 20 {
			st.AddMessage(&state.Message{ID: st.NewMessageID(), From: "user", To: a.ID, Type: state.MessageUpdate,
				Text: "n", Hops: i % 5, Status: state.MessagePending, Created: now.Add(time.Duration(i) * time.Second)})
		}
		return nil
	})
	s := &supervision{env: env, Supervisor: &supervisor.Supervisor{ID: a.ID}}
	batch, err := s.claimMessages(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != messaging.MaxBatchMessages {
		t.Fatalf("batch of %d, want %d", len(batch), messaging.MaxBatchMessages)
	}
	st := statetest.Read(t, env.Store)
	if m := st.Messages["m_stale000"]; m.Status != state.MessageFailed || !strings.Contains(m.Reason, "interrupted") {
		t.Errorf("stale delivering message: %+v", m)
	}
	if n := len(st.MessagesFor(a.ID, state.MessagePending)); n != 20-messaging.MaxBatchMessages {
		t.Errorf("%d left pending, want %d", n, 20-messaging.MaxBatchMessages)
	}
	if got := st.Tasks[a.ID]; len(got.Handling) != messaging.MaxBatchMessages || got.HandlingHops != 4 {
		t.Errorf("handling %v hops %d; want the batch and 4", got.Handling, got.HandlingHops)
	}
	for i := 1; i < len(batch); i++ {
		if batch[i].Created.Before(batch[i-1].Created) {
			t.Fatalf("batch not oldest first")
		}
	}
	s.settleMessages(t.Context(), batch, state.MessageDelivered, "")
	st = statetest.Read(t, env.Store)
	if n := len(st.MessagesFor(a.ID, state.MessageDelivered)); n != messaging.MaxBatchMessages {
		t.Errorf("%d delivered, want %d", n, messaging.MaxBatchMessages)
	}
}
