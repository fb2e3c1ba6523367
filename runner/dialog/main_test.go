package dialog

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports keeps the package pure: screens in, dialogs out.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "runner/profile")
	importcheck.None(t, ".", "os", "os/exec", "net", "syscall")
}
