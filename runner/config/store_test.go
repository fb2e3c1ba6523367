package config

import (
	"errors"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/fault"
)

func TestOpenStore(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"RUNNER_STATE_DIR": dir, "RUNNER_LOCK_TIMEOUT": "250ms", "RUNNER_RETENTION": "72h"}
	s, err := OpenStore(func(k string) string { return env[k] }, nil)
	if err != nil || s.Dir() != dir || s.LockTimeout != 250*time.Millisecond || s.Retention != 72*time.Hour {
		t.Fatalf("OpenStore = %+v, %v", s, err)
	}
	env["RUNNER_RETENTION"] = "-1h"
	if _, err := OpenStore(func(k string) string { return env[k] }, nil); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("RUNNER_RETENTION=-1h: %v", err)
	}
	env["RUNNER_RETENTION"] = ""
	for _, bad := range []string{"soon", "-1s", "0"} {
		env["RUNNER_LOCK_TIMEOUT"] = bad
		if _, err := OpenStore(func(k string) string { return env[k] }, nil); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("RUNNER_LOCK_TIMEOUT=%s: %v", bad, err)
		}
	}
}
