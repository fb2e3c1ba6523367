package gitsnap

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestOnlyGitsnapRunsGit keeps git invocations (a command, an argv, a
// script that runs git) out of every other package's code
// (docs/architecture.md: gitsnap is the only code that runs git). Tests
// elsewhere may set up repositories with git. The guard follows the code
// (go/ast): importcheck.ProgramOwner, whose TestProgramOwnerCatches
// proves it.
func TestOnlyGitsnapRunsGit(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skip("module root not found")
	}
	if n := importcheck.ProgramOwner(t, root, "git", "gitsnap"); n < 100 {
		t.Fatalf("only %d files checked: not the module's root?", n)
	}
}
