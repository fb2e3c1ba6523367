package open

import (
	"os"
	"slices"
	"testing"

	"github.com/runner-cli/runner/runner"
)

// TestCoreEnvironment: Core's environment is the one its Env was given,
// the process's when it was given none.
func TestCoreEnvironment(t *testing.T) {
	given := Core{Env: &runner.Env{Getenv: func(k string) string { return "given-" + k },
		Environ: func() []string { return []string{"A=1"} }}}
	if got := given.Getenv("HOME"); got != "given-HOME" {
		t.Errorf("Getenv = %q, want the Env's", got)
	}
	if got := given.Environ(); !slices.Equal(got, []string{"A=1"}) {
		t.Errorf("Environ = %q, want the Env's", got)
	}
	none := Core{Env: &runner.Env{}}
	if got := none.Getenv("PATH"); got != os.Getenv("PATH") {
		t.Errorf("no Getenv: %q, want the process's PATH", got)
	}
	if got := none.Environ(); len(got) != len(os.Environ()) {
		t.Errorf("no Environ: %d variables, want the process's %d", len(got), len(os.Environ()))
	}
}
