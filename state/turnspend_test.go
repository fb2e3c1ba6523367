package state

import (
	"testing"
	"time"
)

// TestTurnSpendLater: a turn recorded before its spend keeps the running
// turn's live reading until the spend comes, then counts it once, in the
// turn and in the task; an unknown spend falls back to the live reading.
func TestTurnSpendLater(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tk := &Task{ID: "t_spend001", Live: Spend{Input: 50}}
	tk.AddTurnPending(at, "done it", "done it")
	if !tk.Turns[0].SpendPending || tk.Spend.Tokens() != 0 || tk.Live.Input != 50 {
		t.Fatalf("pending: turn %+v, spend %+v, live %+v", tk.Turns[0], tk.Spend, tk.Live)
	}
	tk.SetTurnSpend(Spend{Input: 120, Output: 30, Turns: 1})
	if tk.Turns[0].SpendPending || tk.Turns[0].Spend.Input != 120 || tk.Spend.Input != 120 || tk.Spend.Output != 30 || tk.Live.Tokens() != 0 {
		t.Errorf("after: turn %+v, spend %+v, live %+v", tk.Turns[0], tk.Spend, tk.Live)
	}
	tk.Live = Spend{Input: 70}
	tk.AddTurnPending(at.Add(time.Minute), "again", "again")
	tk.SetTurnSpend(UnknownTurn)
	if got := tk.Turns[1].Spend; got.Input != 70 || got.Turns != 1 || tk.Spend.Input != 190 {
		t.Errorf("an unknown spend with a live reading: turn %+v, task %+v", got, tk.Spend)
	}
}
