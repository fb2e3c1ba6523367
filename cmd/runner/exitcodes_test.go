package main

import "testing"

// TestHTTPStatus is the table of exit codes to HTTP statuses (runner serve).
func TestHTTPStatus(t *testing.T) {
	for code, want := range map[int]int{1: 422, 2: 400, 3: 504, 4: 422, 5: 409, 6: 422, 7: 422, 8: 422, 130: 503, -1: 500, 9: 500} {
		if got := httpStatus(code); got != want {
			t.Errorf("httpStatus(%d) = %d, want %d", code, got, want)
		}
	}
}

// TestExitMeaning: every exit code but 0 is said in words.
func TestExitMeaning(t *testing.T) {
	for _, code := range []int{ExitFailed, ExitUsage, ExitTimeout, ExitNeedsInput, ExitBusy, ExitBudget, ExitLimited, ExitSomeFailed, ExitInterrupted} {
		if exitMeaning(code) == "error" {
			t.Errorf("exit code %d has no meaning", code)
		}
	}
}
