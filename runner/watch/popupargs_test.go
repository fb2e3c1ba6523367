package watch

import (
	"strings"
	"testing"
	"time"
)

// TestPopupArgs: each option that is not the default, as its flag.
func TestPopupArgs(t *testing.T) {
	if got := PopupArgs("", false, "", DefaultRecent); len(got) != 0 {
		t.Errorf("defaults: %q", got)
	}
	got := strings.Join(PopupArgs("api", true, "b1", time.Hour), " ")
	if got != "--project api --all --host b1 --recent 1h0m0s" {
		t.Errorf("all set: %q", got)
	}
}
