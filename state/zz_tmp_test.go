package state

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

func seedZZ(b *testing.B, n int) *Store {
	s := openTemp(b)
	now := clock.Now().UTC()
	mustUpdate(b, s, func(st *State) error {
		for i := range n {
			id := fmt.Sprintf("t_zz%06d", i)
			at := now.Add(-time.Duration(n-i) * 10 * time.Second)
			tk := finishedTask(id, at)
			tk.Reclaimed = time.Time{}
			tk.Tmux = TmuxTarget{Socket: "/tmp/rbd123/s", Session: "dir-proj-019acfdb", Window: id, Pane: "%1234"}
			tk.SnapshotRef = "refs/runner/snapshots/" + id
			tk.Spend = Spend{Input: 100, Output: 10, Turns: 1}
			st.Tasks[id] = tk
		}
		st.Tasks["t_live0000"] = &Task{ID: "t_live0000", Dir: "/d", Agent: "sim", Text: "x", Status: StatusRunning, Created: now}
		return nil
	})
	return s
}

func BenchmarkZZBusy(b *testing.B) {
	s := seedZZ(b, 500)
	ctx := context.Background()
	b.Run("UpdateIndexOne", func(b *testing.B) {
		for b.Loop() {
			if err := s.UpdateIndex(ctx, func(st *State) error {
				t := st.Task("t_live0000")
				t.TurnCount++
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadIndex", func(b *testing.B) {
		for b.Loop() {
			lastIndex.mu.Lock()
			lastIndex.ix = nil
			lastIndex.mu.Unlock()
			if _, err := s.ReadIndex(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
