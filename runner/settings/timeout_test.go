package settings

import (
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/config"
)

// TestTaskTimeout: --timeout (the config's task_timeout) when given, else
// the default, which a record that kept 0 gets too.
func TestTaskTimeout(t *testing.T) {
	for _, tc := range []struct {
		set  time.Duration
		want time.Duration
	}{
		{0, config.DefaultTaskTimeout},
		{-time.Second, config.DefaultTaskTimeout},
		{30 * time.Second, 30 * time.Second},
	} {
		if got := (Run{Timeout: tc.set}).TaskTimeout(); got != tc.want {
			t.Errorf("Run{Timeout: %v}.TaskTimeout() = %v, want %v", tc.set, got, tc.want)
		}
	}
}
