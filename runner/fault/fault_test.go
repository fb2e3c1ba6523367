package fault

import (
	"errors"
	"fmt"
	"testing"
)

// kinds are the sentinels the exit-code table tells apart: each must be
// told from every other one.
var kinds = []error{ErrUsage, ErrNeedsInput, ErrBusy, ErrBudget, ErrLimited}

func TestKindsAreDistinct(t *testing.T) {
	for i, a := range kinds {
		for j, b := range kinds {
			if got := errors.Is(a, b); got != (i == j) {
				t.Errorf("errors.Is(%q, %q) = %v, want %v", a, b, got, i == j)
			}
		}
	}
}

func TestMadeErrorsKeepTheirKindAndMessage(t *testing.T) {
	tests := []struct {
		name string
		err  error
		kind error
		msg  string
	}{
		{"usage", Usagef("no agent %q: run runner agents to list them", "clod"), ErrUsage,
			`no agent "clod": run runner agents to list them`},
		{"busy", Busyf("task %s is running: wait for it", "t_1"), ErrBusy, "task t_1 is running: wait for it"},
		{"no args", Usagef("bad"), ErrUsage, "bad"},
		{"a percent sign kept", Busyf("%d%% used", 90), ErrBusy, "90% used"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.msg {
				t.Errorf("message %q, want %q (its own text, not the kind's)", got, tt.msg)
			}
			for _, k := range kinds {
				if got := errors.Is(tt.err, k); got != (k == tt.kind) {
					t.Errorf("errors.Is(err, %q) = %v, want %v", k, got, k == tt.kind)
				}
			}
			// A caller's wrap keeps the kind, so the command exits on it.
			wrapped := fmt.Errorf("dispatch: %w", tt.err)
			if !errors.Is(wrapped, tt.kind) {
				t.Errorf("wrapped with %%w: errors.Is(%q, %q) = false", wrapped, tt.kind)
			}
			if errors.Is(fmt.Errorf("dispatch: %v", tt.err), tt.kind) {
				t.Error("wrapped as text only (not %w): the kind should be lost")
			}
		})
	}
}

// TestAnErrorOfTheSameTextIsNotTheKind: the kind is matched by identity,
// not by a message that reads the same.
func TestAnErrorOfTheSameTextIsNotTheKind(t *testing.T) {
	if errors.Is(errors.New(ErrUsage.Error()), ErrUsage) {
		t.Error("a new error reading like ErrUsage matched it")
	}
	if errors.Is(Usagef("x"), Usagef("x")) {
		t.Error("two Usagef errors matched each other: only the kind should match")
	}
}
