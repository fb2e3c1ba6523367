package config

import (
	"github.com/runner-cli/runner/internal/portprobe"
	"strconv"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// OpenStore opens the state store in the directory state.DefaultDir picks
// from the environment (RUNNER_STATE_DIR, XDG_STATE_HOME, HOME), with the
// config's settings: lock_timeout (how long a change waits for the state
// lock before failing as busy, exit 5) and retention (how long finished
// tasks are kept before every change prunes them). RUNNER_LOCK_TIMEOUT (a Go
// duration such as 500ms or 30s) and RUNNER_RETENTION (e.g. 72h, or 0 to
// keep them) override the config. cfg nil means the config file is read
// (Load). It is the one way every command opens the store.
func OpenStore(getenv func(string) string, cfg *Config) (*state.Store, error) {
	if cfg == nil {
		c, _, err := Load(getenv)
		if err != nil {
			return nil, err
		}
		cfg = c
	}
	dir, err := state.DefaultDir(getenv)
	if err != nil {
		return nil, err
	}
	s, err := state.Open(dir)
	if err != nil {
		return nil, err
	}
	if cfg.LockTimeout.Duration > 0 {
		s.LockTimeout = cfg.LockTimeout.Duration
	}
	s.Retention = cfg.Retention.Duration
	s.PortBusy = portprobe.InUse
	if v := getenv("RUNNER_ARCHIVE_AFTER"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fault.Usagef("RUNNER_ARCHIVE_AFTER=%q is not a count (how many finished tasks the state index keeps before archiving; default %d)", v, state.DefaultArchiveAfter)
		}
		s.ArchiveAfter = max(n, 1)
	}
	if v := getenv("RUNNER_LOCK_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fault.Usagef("RUNNER_LOCK_TIMEOUT=%q is not a positive duration (use e.g. 500ms or 30s)", v)
		}
		s.LockTimeout = d
	}
	if v := getenv("RUNNER_RETENTION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, fault.Usagef("RUNNER_RETENTION=%q is not a duration (use e.g. 72h, or 0 to keep finished tasks)", v)
		}
		s.Retention = d
	}
	return s, nil
}
