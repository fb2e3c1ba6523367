package exitcode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// TestHTTPStatus is the table of exit codes to HTTP statuses (runner serve).
func TestHTTPStatus(t *testing.T) {
	for code, want := range map[int]int{1: 422, 2: 400, 3: 504, 4: 422, 5: 409, 6: 422, 7: 422, 8: 422, 130: 503, -1: 500, 9: 500} {
		if got := HTTPStatus(code); got != want {
			t.Errorf("HTTPStatus(%d) = %d, want %d", code, got, want)
		}
	}
}

// TestExitMeaning: every exit code but 0 is said in words.
func TestExitMeaning(t *testing.T) {
	for _, code := range []int{ExitFailed, ExitUsage, ExitTimeout, ExitNeedsInput, ExitBusy, ExitBudget, ExitLimited, ExitSomeFailed, ExitInterrupted} {
		if Meaning(code) == "error" {
			t.Errorf("exit code %d has no meaning", code)
		}
	}
}

// TestPrint: an error is said once, as a line or as JSON with --json; an
// error the command already said is not; a usage error points at --help.
func TestPrint(t *testing.T) {
	for _, c := range []struct {
		name           string
		err            error
		asJSON         bool
		wantOut, wantJ string
	}{
		{"plain", errors.New("boom"), false, "runner: boom\n", ""},
		{"json", errors.New("boom"), true, "", `{"error":"boom","exit_code":1}` + "\n"},
		{"flags", &cmdkit.FlagError{Err: errors.New("unknown flag: --x")}, false, "runner: unknown flag: --x\nRun 'runner --help' for usage.\n", ""},
		{"said", &cmdkit.SilentError{Kind: fault.ErrUsage}, false, "", ""},
		{"program", &cmdkit.ProgramExit{Status: 3}, true, "", ""},
		{"code only", &Error{Code: 4}, false, "", ""},
		{"hint", fmt.Errorf("x: %w", state.ErrProjectLocked), false, "runner: x: " + state.ErrProjectLocked.Error() + " (wait for it: dispatch --exclusive --wait-lock)\n", ""},
	} {
		var out, raw strings.Builder
		Print(c.err, Of(c.err), c.asJSON, &out, &raw)
		if out.String() != c.wantOut || raw.String() != c.wantJ {
			t.Errorf("%s: %q %q; want %q %q", c.name, out.String(), raw.String(), c.wantOut, c.wantJ)
		}
	}
}

// TestOf: a few kinds of error and the code each stands for.
func TestOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK}, {errors.New("x"), ExitFailed}, {fault.ErrUsage, ExitUsage}, {context.Canceled, ExitInterrupted},
		{context.DeadlineExceeded, ExitTimeout}, {state.ErrBusy, ExitBusy}, {&Error{Code: 7}, 7},
		{&cmdkit.ProgramExit{Status: 42}, 42}, {&cmdkit.FlagError{Err: errors.New("x")}, ExitUsage},
		{errors.New("unknown flag: --nope"), ExitUsage}, {fault.ErrBudget, ExitBudget},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
