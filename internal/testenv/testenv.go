// Package testenv keeps the caller's environment out of the module's
// tests: a user who runs the suite with RUNNER_STATE_DIR, XDG dirs, TMUX
// or GIT_DIR exported must get the same result as CI. Every test binary
// of the module calls Main (or Scrub) from its TestMain, held by
// TestEveryPackageScrubs.
package testenv

import (
	"os"
	"slices"
	"strings"
)

// scrubbed lists the exact names removed beside the RUNNER_ and XDG_
// prefixes: a tmux client's own (a test run inside tmux must not talk to
// the user's server) and git's repository redirections (a test run from a
// git hook sees them).
var scrubbed = []string{
	"TMUX", "TMUX_PANE", "TMUX_TMPDIR",
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
	"GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
}

// knobs are the prefixes of the tests' own RUNNER_ variables, kept: a
// benchmark's binary, the real-agent suite's "required", a golden
// update, a helper process's role.
var knobs = []string{"RUNNER_BENCH_", "RUNNER_GATE_", "RUNNER_REAL_AGENTS_", "RUNNER_TEST_", "RUNNER_UPDATE_",
	"RUNNER_QUIET_", "RUNNER_GC_CLIS", "RUNNER_ARCHIVE_AFTER"}

// Scrub removes from the process's environment every variable through
// which the caller's runner, XDG, tmux or git settings would reach a test
// or what it starts. It returns the names it removed.
func Scrub() []string {
	var gone []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.ContainsFunc(knobs, func(k string) bool { return strings.HasPrefix(name, k) }) {
			continue
		}
		if strings.HasPrefix(name, "RUNNER_") || strings.HasPrefix(name, "XDG_") || strings.HasPrefix(name, "GIT_CONFIG_KEY_") ||
			strings.HasPrefix(name, "GIT_CONFIG_VALUE_") || slices.Contains(scrubbed, name) {
			os.Unsetenv(name)
			gone = append(gone, name)
		}
	}
	return gone
}

// Main scrubs the environment and runs the tests: a package's TestMain
// is `func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }`.
func Main(m interface{ Run() int }) int {
	Scrub()
	return m.Run()
}

// M wraps m so that its Run scrubs first: for a TestMain that hands m on
// (testscript.Main runs the binary as a command without calling Run, and
// that command keeps its script's settings).
func M(m interface{ Run() int }) interface{ Run() int } { return scrubbing{m} }

type scrubbing struct{ m interface{ Run() int } }

func (s scrubbing) Run() int { return Main(s.m) }
