package budget

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

func TestOverridesCheck(t *testing.T) {
	if err := NoOverrides.Check(); err != nil || NoOverrides.Given() {
		t.Errorf("NoOverrides: Check %v, Given %v", err, NoOverrides.Given())
	}
	for _, o := range []Overrides{
		{MaxTurns: -2, Tokens: -1, USD: -1},
		{MaxTurns: -1, Tokens: -5, USD: -1},
		{MaxTurns: -1, Tokens: -1, USD: -0.5},
		{MaxTurns: -1, Tokens: -1, USD: math.NaN()},
		{MaxTurns: -1, Tokens: -1, USD: math.Inf(1)},
	} {
		if err := o.Check(); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("%+v: Check = %v, want a usage error", o, err)
		}
	}
	for _, o := range []Overrides{
		{Timeout: time.Minute, MaxTurns: -1, Tokens: -1, USD: -1},
		{MaxTurns: 0, Tokens: -1, USD: -1},
		{MaxTurns: -1, Tokens: 0, USD: -1},
		{MaxTurns: -1, Tokens: -1, USD: 0},
	} {
		if err := o.Check(); err != nil || !o.Given() {
			t.Errorf("%+v: Check %v, Given %v", o, err, o.Given())
		}
	}
}

// TestOverridesApply: what is given replaces the task's settings, the
// rest stays; a token budget for an agent whose tokens runner cannot
// read is refused; a task whose settings do not decode says so.
func TestOverridesApply(t *testing.T) {
	rec, _ := json.Marshal(settings.Run{Timeout: time.Hour, MaxTurns: 3, BudgetTokens: 100, BudgetUSD: 2})
	tk := &state.Task{ID: "t_overaaaa", Agent: "meter", Settings: rec}
	profiles := []*profile.Profile{{Name: "mute"}, {Name: "meter", Spend: "sim", SpendCost: true}}

	o := NoOverrides
	o.Timeout, o.MaxTurns = time.Minute, 0
	s, err := o.Apply(tk, profiles)
	if err != nil {
		t.Fatal(err)
	}
	if s.Timeout != time.Minute || s.MaxTurns != 0 || s.BudgetTokens != 100 || s.BudgetUSD != 2 {
		t.Errorf("settings %+v", s)
	}

	o = NoOverrides
	o.Tokens = 500
	if _, err := o.Apply(&state.Task{ID: "t_overaaaa", Agent: "mute"}, profiles); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("a token budget for an agent with no spend record: %v", err)
	}
	if s, err := o.Apply(&state.Task{ID: "t_overaaaa", Agent: "gone"}, profiles); err != nil || s.BudgetTokens != 500 {
		t.Errorf("an agent with no profile: %+v, %v", s, err)
	}
	if _, err := o.Apply(&state.Task{ID: "t_overaaaa", Settings: json.RawMessage(`{"timeout":`)}, profiles); err == nil {
		t.Error("damaged settings: no error")
	}
}

// TestOverridesFor: nothing given reads no task; a bad budget is refused
// before the task is read; the task read is the one named, and what
// reading or applying says is the error.
func TestOverridesFor(t *testing.T) {
	rec, _ := json.Marshal(settings.Run{Timeout: time.Hour, MaxTurns: 3})
	var read []string
	get := func(_ context.Context, ref string) (*state.Task, error) {
		read = append(read, ref)
		switch ref {
		case "t_fo":
			return &state.Task{ID: "t_foraaaa", Agent: "mute", Settings: rec}, nil
		}
		return nil, errors.New("no task " + ref)
	}
	profiles := []*profile.Profile{{Name: "mute"}}
	if s, err := NoOverrides.For(t.Context(), get, "t_fo", profiles); s != nil || err != nil || len(read) != 0 {
		t.Fatalf("nothing given: %+v, %v, read %v", s, err, read)
	}
	o := NoOverrides
	o.Tokens = -7
	if _, err := o.For(t.Context(), get, "t_fo", profiles); !errors.Is(err, fault.ErrUsage) || len(read) != 0 {
		t.Errorf("bad budget: %v, read %v", err, read)
	}
	o = NoOverrides
	o.MaxTurns = 5
	s, err := o.For(t.Context(), get, "t_fo", profiles)
	if err != nil || s == nil || s.MaxTurns != 5 || s.Timeout != time.Hour || len(read) != 1 {
		t.Errorf("turns given: %+v, %v, read %v", s, err, read)
	}
	if _, err := o.For(t.Context(), get, "t_nosuch", profiles); err == nil || err.Error() != "no task t_nosuch" {
		t.Errorf("unknown task: %v", err)
	}
	o = NoOverrides
	o.Tokens = 500
	if _, err := o.For(t.Context(), get, "t_fo", profiles); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("a token budget for an agent with no spend record: %v", err)
	}
}
