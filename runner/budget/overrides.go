package budget

import (
	"context"
	"math"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

// Overrides are what a follow-up turn (runner send) changes of a task's
// settings from then on: its turn's timeout, and its budgets of turns,
// tokens and dollars (0: none). A zero Timeout and a budget of -1 are not
// given.
type Overrides struct {
	Timeout  time.Duration
	MaxTurns int
	Tokens   int64
	USD      float64
}

// NoOverrides changes nothing.
var NoOverrides = Overrides{MaxTurns: -1, Tokens: -1, USD: -1}

// Check refuses a budget that is no count or amount (exit 2).
func (o Overrides) Check() error {
	if o.MaxTurns < -1 {
		return fault.Usagef("--max-turns %d: give a count of turns (0: no budget)", o.MaxTurns)
	}
	if o.Tokens < -1 {
		return fault.Usagef("--budget-tokens %d: give a count of tokens (0: no budget)", o.Tokens)
	}
	if (o.USD < 0 && o.USD != -1) || math.IsNaN(o.USD) || math.IsInf(o.USD, 0) {
		return fault.Usagef("--budget-usd %v: give an amount of dollars (0: no budget)", o.USD)
	}
	return nil
}

// Given reports whether o changes anything.
func (o Overrides) Given() bool {
	return o.Timeout > 0 || o.MaxTurns >= 0 || o.Tokens >= 0 || o.USD >= 0
}

// Apply is t's settings with o's changes, refused (CheckAgent) when t's
// agent cannot be held to the budgets then (an agent with no profile any
// more is not checked).
func (o Overrides) Apply(t *state.Task, profiles []*profile.Profile) (settings.Run, error) {
	s, err := settings.Of(t)
	if err != nil {
		return s, err
	}
	if o.Timeout > 0 {
		s.Timeout = o.Timeout
	}
	if o.MaxTurns >= 0 {
		s.MaxTurns = o.MaxTurns
	}
	if o.Tokens >= 0 {
		s.BudgetTokens = o.Tokens
	}
	if o.USD >= 0 {
		s.BudgetUSD = o.USD
	}
	if prof, err := profile.FindProfile(profiles, t.Agent); err == nil {
		if err := CheckAgent(s.Budget(), prof); err != nil {
			return s, err
		}
	}
	return s, nil
}

// For is the settings of task ref's next turn with o's changes (Check,
// then Apply to the task as get reads it), or nil when o changes
// nothing: the task's own.
func (o Overrides) For(ctx context.Context, get func(ctx context.Context, ref string) (*state.Task, error), ref string, profiles []*profile.Profile) (*settings.Run, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if !o.Given() {
		return nil, nil
	}
	t, err := get(ctx, ref)
	if err != nil {
		return nil, err
	}
	s, err := o.Apply(t, profiles)
	if err != nil {
		return nil, err
	}
	return &s, nil
}
