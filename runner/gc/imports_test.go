package gc

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner"
)

// TestTakesDepsNotEnv keeps the package doc true: what it uses comes in
// Deps, not through package runner.
func TestTakesDepsNotEnv(t *testing.T) {
	importcheck.None(t, ".", importcheck.Module+"runner")
}

// TestStateDirOptionIsRunners: the pane option gc reads to know its own
// windows is the one package runner sets at launch.
func TestStateDirOptionIsRunners(t *testing.T) {
	if stateDirOption != runner.StateDirOption {
		t.Errorf("gc reads pane option %q, runner sets %q", stateDirOption, runner.StateDirOption)
	}
}
