package settings

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// TestImports keeps the package doc true: types and decoding only, no
// tmux client, no process, no state store.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "runner/config", "runner/messaging", "runner/profile", "state", "tmuxctl")
}

func TestOf(t *testing.T) {
	want := Run{Timeout: time.Minute, MaxTurns: 3, BudgetTokens: 1000, OnLimit: OnLimitWait,
		Start: &Start{Argv: []string{"/bin/claude"}, Sandbox: &Sandbox{Home: SandboxHomeTask}}}
	raw, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Of(&state.Task{ID: "t_1", Settings: raw})
	if err != nil || got.Timeout != time.Minute || got.Start == nil || got.Start.Sandbox.Home != SandboxHomeTask {
		t.Fatalf("Of = %+v, %v", got, err)
	}
	if b := got.Budget(); b != (Budget{Turns: 3, Tokens: 1000}) {
		t.Errorf("Budget = %+v", b)
	}
	if b := BudgetOf(&state.Task{ID: "t_1", Settings: raw}); b.Turns != 3 {
		t.Errorf("BudgetOf = %+v", b)
	}
	if got, err := Of(&state.Task{ID: "t_old"}); err != nil || got.Start != nil {
		t.Errorf("no settings recorded: %+v, %v; want the zero value", got, err)
	}
	_, err = Of(&state.Task{ID: "t_bad", Settings: json.RawMessage(`{"timeout":"x"`)})
	if err == nil || !strings.Contains(err.Error(), "task t_bad") || !strings.Contains(err.Error(), "runner state repair") {
		t.Errorf("a damaged record: %v", err)
	}
	if b := BudgetOf(&state.Task{ID: "t_bad", Settings: json.RawMessage(`[`)}); b != (Budget{}) {
		t.Errorf("BudgetOf a damaged record = %+v, want none", b)
	}
}

func TestSettleFor(t *testing.T) {
	p := &profile.Profile{}
	p.Settle.Duration = 2 * time.Second
	for _, tc := range []struct {
		set  Run
		prof *profile.Profile
		want time.Duration
	}{
		{Run{Settle: time.Second, DefaultSettle: 5 * time.Second}, p, time.Second},
		{Run{DefaultSettle: 5 * time.Second}, p, 2 * time.Second},
		{Run{DefaultSettle: 5 * time.Second}, &profile.Profile{}, 5 * time.Second},
	} {
		if got := tc.set.SettleFor(tc.prof); got != tc.want {
			t.Errorf("SettleFor(%+v) = %v, want %v", tc.set, got, tc.want)
		}
	}
}

func TestValidSandboxHome(t *testing.T) {
	for s, want := range map[string]bool{"": true, "shared": true, "task": true, "Task": false, "user": false} {
		if got := ValidSandboxHome(s); got != want {
			t.Errorf("ValidSandboxHome(%q) = %v", s, got)
		}
	}
}
