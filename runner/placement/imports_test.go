package placement

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestImports holds the package to what its doc says it imports: the hosts (runner/hosts, runner/remote), the task's record (runner/record, state), its settings and profile, git on the host (gitsnap), the kinds of error.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "gitsnap", "runner/fault", "runner/hosts", "runner/profile", "runner/record", "runner/remote", "runner/settings", "state")
}
